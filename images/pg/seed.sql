-- Lab data, seeded at image build time so a run never waits for it.
CREATE ROLE lab LOGIN;
-- perflab's own connections (readiness, samplers, smoke): separate from the app's role so
-- pg_stat_activity tells them apart and breaking the app's login does not blind the harness.
CREATE ROLE perflab LOGIN;
GRANT pg_monitor, pg_read_all_data TO perflab;
CREATE DATABASE lab OWNER lab;
\connect lab
CREATE EXTENSION IF NOT EXISTS pg_prewarm;
SET ROLE lab;
-- PHP lab (lab-spec §3): primary-key lookups on 10,000 rows.
CREATE TABLE products (id integer PRIMARY KEY, name text NOT NULL, price numeric(10,2) NOT NULL);
INSERT INTO products SELECT i, 'product ' || i, round((1 + (i * 7919) % 100000 / 100.0)::numeric, 2)
  FROM generate_series(1, 10000) AS i;
-- Node lab (lab-spec §4): 1,000,000 orders for 1,000 customers, indexed on customer_id.
CREATE TABLE orders (id bigint PRIMARY KEY, customer_id integer NOT NULL, amount numeric(10,2) NOT NULL,
  created_at timestamptz NOT NULL);
INSERT INTO orders SELECT i, 1 + (i * 7919) % 1000, round(((i * 104729) % 50000 / 100.0)::numeric, 2),
  timestamptz '2026-01-01 00:00:00+00' + (i % 31536000) * interval '1 second'
  FROM generate_series(1::bigint, 1000000) AS i;
CREATE INDEX orders_customer_id_idx ON orders (customer_id);
RESET ROLE;
-- Set hint bits and visibility now: reads at run time must not dirty the image's pages.
VACUUM (FREEZE, ANALYZE);
CHECKPOINT;
