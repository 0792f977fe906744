// The baseline: a bare Fastify hello-world, measured in the same run as GenGate.
import Fastify from 'fastify';

const app = Fastify({ logger: false });
app.get('/', async () => ({ hello: 'world' }));
await app.listen({ port: 0, host: '127.0.0.1' });
const address = app.server.address();
process.stdout.write(`listening on http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}\n`);
