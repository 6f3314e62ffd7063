// The server of 30-node-threadpool-queue: a Node.js HTTP server (one event loop on the
// main thread, libuv's pool of 4 worker threads behind it). GET /report hashes four
// passwords with crypto.pbkdf2, which Node runs on the pool: the four hashes take the
// four workers for about a second. GET /page reads a small file with fs.readFile, which
// runs on the same pool too: queued behind the hashes, it waits for a worker while the
// event loop itself is idle.
'use strict';
const crypto = require('crypto');
const fs = require('fs');
const http = require('http');
const path = require('path');

const [port, docroot] = process.argv.slice(2);

function hash(salt) {
  return new Promise((resolve, reject) =>
    crypto.pbkdf2('correct horse battery staple', salt, 500000, 64, 'sha512',
      (err, key) => (err ? reject(err) : resolve(key))));
}

const server = http.createServer((req, res) => {
  if (req.url === '/report') {
    Promise.all(['a', 'b', 'c', 'd'].map(hash)).then(() => {
      res.end('busy done\n');
    }, (err) => { res.statusCode = 500; res.end(String(err)); });
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
// workers start here and keep the name "node"); the main thread then takes the server's
// name, as servers do with process.title.
fs.promises.readFile(path.join(docroot, 'config.json'), 'utf8').then((text) => {
  const config = JSON.parse(text);
  server.listen(Number(port), config.host, () => { process.title = 'file-server'; });
});
