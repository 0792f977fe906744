// The baselines, measured in the same run as GenGate: a bare Fastify hello-world, and a bare upload
// (the same multipart parser streaming the file into a new file in 1 MB writes as GenGate does, nothing checked) when BARE_UPLOAD_DIR is set.
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import Fastify from 'fastify';
import multipart from '@fastify/multipart';
import { FileSink } from '../src/files/index.js';

const app = Fastify({ logger: false });
app.get('/', async () => ({ hello: 'world' }));
const uploadDir = process.env.BARE_UPLOAD_DIR;
if (uploadDir) {
  let n = 0;
  // In its own scope, as in GenGate, so the hello-world baseline runs without the multipart plugin.
  await app.register(async (scope) => {
    await scope.register(multipart, { limits: { files: 1, fileSize: 1024 * 1024 * 1024 } });
    // Each upload is kept in a new file, as GenGate keeps each one: the page cache fills alike for both.
    scope.post('/upload', async (req) => {
      const part = await req.file();
      if (!part) throw new Error('no file');
      await pipeline(part.file, new FileSink(path.join(uploadDir, `bare-${n++}.bin`), 1024 * 1024));
      return { ok: true };
    });
  });
}
await app.listen({ port: 0, host: '127.0.0.1' });
const address = app.server.address();
process.stdout.write(`listening on http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}\n`);
