// The server of 30-node-threadpool-queue: a Node.js HTTP server (one event loop on the
// main thread, libuv's pool behind it, one worker thread here: UV_THREADPOOL_SIZE=1).
// GET /check hashes a password with crypto.pbkdf2 briefly (about 0.3 s of CPU), GET
// /report at length (about 2 s); Node runs both on the pool. GET /page reads a small file
// with fs.readFile, which runs on the same pool: queued behind the hashes, it waits for
// the worker while the event loop itself is idle.
'use strict';
const crypto = require('crypto');
const fs = require('fs');
const http = require('http');
const path = require('path');

const [port, docroot] = process.argv.slice(2);

function hash(rounds) {
  return new Promise((resolve, reject) =>
    crypto.pbkdf2('correct horse battery staple', 'salt', rounds, 64, 'sha512',
      (err, key) => (err ? reject(err) : resolve(key))));
}

function answer(res, rounds, text) {
  hash(rounds).then(() => res.end(text),
    (err) => { res.statusCode = 500; res.end(String(err)); });
}

const server = http.createServer((req, res) => {
  if (req.url === '/check') {
    answer(res, 300000, 'checked\n');
  } else if (req.url === '/report') {
    answer(res, 2500000, 'busy done\n');
  } else if (req.url === '/page') {
    fs.readFile(path.join(docroot, 'index.html'), (err, data) => {
      if (err) { res.statusCode = 404; res.end(); return; }
      res.end(data);
    });
  } else {
    res.statusCode = 404;
    res.end();
  }
});

// The configuration is read before the server listens (the pool's first job, so the
// worker starts here and keeps the name "node"); the main thread then takes the server's
// name, as servers do with process.title.
fs.promises.readFile(path.join(docroot, 'config.json'), 'utf8').then((text) => {
  const config = JSON.parse(text);
  server.listen(Number(port), config.host, () => { process.title = 'file-server'; });
});
