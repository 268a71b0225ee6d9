//! Decompression on its own thread: the parser reads whole 1 MiB chunks from a channel.
use std::io::Read;

/// Moves decompression to a second thread: the parser reads whole 1 MiB chunks from a channel.
pub(super) struct ChunkPipe {
    rx: std::sync::mpsc::Receiver<std::io::Result<Vec<u8>>>,
    cur: Vec<u8>,
    pos: usize,
}

impl ChunkPipe {
    pub(super) fn spawn<R: Read + Send + 'static>(mut r: R) -> Self {
        let (tx, rx) = std::sync::mpsc::sync_channel(4);
        std::thread::spawn(move || {
            loop {
                let mut buf = vec![0u8; 1 << 20];
                let mut filled = 0;
                while filled < buf.len() {
                    match r.read(&mut buf[filled..]) {
                        Ok(0) => break,
                        Ok(n) => filled += n,
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                        Err(e) => {
                            let _ = tx.send(Err(e));
                            return;
                        }
                    }
                }
                if filled == 0 {
                    return;
                }
                buf.truncate(filled);
                if tx.send(Ok(buf)).is_err() {
                    return;
                }
            }
        });
        ChunkPipe {
            rx,
            cur: Vec::new(),
            pos: 0,
        }
    }
}

impl Read for ChunkPipe {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if self.pos >= self.cur.len() {
            match self.rx.recv() {
                Ok(Ok(v)) => {
                    self.cur = v;
                    self.pos = 0;
                }
                Ok(Err(e)) => return Err(e),
                Err(_) => return Ok(0),
            }
        }
        let n = out.len().min(self.cur.len() - self.pos);
        out[..n].copy_from_slice(&self.cur[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}
