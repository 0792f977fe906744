// A kie.ai-shaped upstream for the in-flight bench (bench/inflight.ts), run as its own process so
// its CPU is not counted against GenGate's worker. Jobs API: POST /api/v1/jobs/createTask and
// GET /api/v1/jobs/recordInfo with the {code, msg, data} envelope; a job is `queuing` for
// FAKE_QUEUE_MS, then `generating`, then `success` with one PNG result (served here).
// When jobs complete: `POST /go?holdMs=&spreadMs=` (the bench, once every task is in flight) has
// the jobs created so far complete in creation order, the first holdMs after it and the others
// spread evenly over spreadMs (10,000 jobs over 60 s: the rate at which a worker holding 10,000
// jobs of 60 s sees them complete); a job created after that completes FAKE_JOB_MS after creation.
// At completion it posts a notice to the job's callBackUrl when the job is one of those picked to
// notify (FAKE_NOTIFY_EVERY: every n-th job; 0: none; of those, FAKE_DROP_EVERY: every n-th notice is
// lost on the way, as a real network sometimes loses one), and it remembers when each job completed
// (`GET /stats`), so the bench can time completion to client callback.
import http from 'node:http';
import { deflateSync } from 'node:zlib';

const JOB_MS = Number(process.env.FAKE_JOB_MS ?? 60_000);
const QUEUE_MS = Number(process.env.FAKE_QUEUE_MS ?? 2_000);
const NOTIFY_EVERY = Number(process.env.FAKE_NOTIFY_EVERY ?? 2);
const DROP_EVERY = Number(process.env.FAKE_DROP_EVERY ?? 0);

/** A valid 1×1 PNG (signature, IHDR, IDAT, IEND with their CRCs). */
function png(): Buffer {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (b: Buffer) => {
    let c = 0xffffffff;
    for (const x of b) c = crcTable[(c ^ x) & 0xff]! ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type: string, data: Buffer) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const sum = Buffer.alloc(4);
    sum.writeUInt32BE(crc(body));
    return Buffer.concat([len, body, sum]);
  };
  const ihdr = Buffer.from([0, 0, 0, 1, 0, 0, 0, 1, 8, 2, 0, 0, 0]);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(Buffer.from([0, 200, 40, 40]))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

interface Job {
  id: string;
  /** The Idempotency-Key GenGate's same-api adapter sends: `gengate-<GenGate task id>` (a kie.ai adapter sends none). */
  key: string;
  /** The prompt, which the bench makes unique per task: how it finds the job of a task whatever the route kind sends. */
  prompt: string;
  createdAt: number;
  callBackUrl: string | null;
  notify: boolean;
  /** When the job completed here (epoch ms), once it has. */
  doneAt: number | null;
}

const image = png();
const jobs = new Map<string, Job>();
const byKey = new Map<string, string>();
const stats = { creates: 0, recordInfos: 0, recordInfosFinal: 0, notices: 0, noticeErrors: 0, downloads: 0 };
let base = '';
/** Whether POST /go came. */
let went = false;

const send = (res: http.ServerResponse, status: number, body: unknown) =>
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));

/** Completes a job: records the time, and posts the notice (kie.ai posts the task's record to callBackUrl). */
function complete(job: Job): void {
  job.doneAt = Date.now();
  if (!job.notify || !job.callBackUrl) return;
  stats.notices++;
  const body = JSON.stringify({ code: 200, msg: 'success', data: { taskId: job.id, state: 'success' } });
  fetch(job.callBackUrl, { method: 'POST', body, headers: { 'content-type': 'application/json' } })
    .then((r) => r.arrayBuffer())
    .catch(() => stats.noticeErrors++);
}

function record(job: Job, now: number): Record<string, unknown> {
  const state = job.doneAt !== null ? 'success' : now - job.createdAt < QUEUE_MS ? 'queuing' : 'generating';
  const data: Record<string, unknown> = { taskId: job.id, model: 'google/nano-banana', state, createTime: job.createdAt };
  if (state === 'success') {
    data.resultJson = JSON.stringify({ resultUrls: [`${base}/out/${job.id}.png`] });
    data.completeTime = job.doneAt;
  }
  return data;
}

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const url = new URL(req.url ?? '/', base);
    if (url.pathname.startsWith('/out/')) {
      stats.downloads++;
      return res.writeHead(200, { 'content-type': 'image/png', 'content-length': image.length }).end(image);
    }
    if (url.pathname === '/api/v1/jobs/createTask' && req.method === 'POST') {
      const key = String(req.headers['idempotency-key'] ?? '');
      const known = key ? byKey.get(key) : undefined;
      if (known) return send(res, 200, { code: 200, msg: 'success', data: { taskId: known } });
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as { callBackUrl?: string; input?: { prompt?: unknown } };
      const n = ++stats.creates;
      const job: Job = {
        id: `kie_${n}`,
        key,
        prompt: String(body.input?.prompt ?? ''),
        createdAt: Date.now(),
        callBackUrl: body.callBackUrl || null,
        notify: NOTIFY_EVERY > 0 && n % NOTIFY_EVERY === 0 && !(DROP_EVERY > 0 && n % DROP_EVERY === 0),
        doneAt: null,
      };
      jobs.set(job.id, job);
      if (key) byKey.set(key, job.id);
      if (went) setTimeout(() => complete(job), JOB_MS).unref();
      return send(res, 200, { code: 200, msg: 'success', data: { taskId: job.id } });
    }
    if (url.pathname === '/api/v1/jobs/recordInfo') {
      stats.recordInfos++;
      const job = jobs.get(url.searchParams.get('taskId') ?? '');
      if (!job) return send(res, 404, { code: 404, msg: 'task not found', data: null });
      const data = record(job, Date.now());
      if (data.state === 'success') stats.recordInfosFinal++;
      return send(res, 200, { code: 200, msg: 'success', data });
    }
    if (url.pathname === '/go' && req.method === 'POST') {
      went = true;
      const hold = Number(url.searchParams.get('holdMs') ?? 0);
      const spread = Number(url.searchParams.get('spreadMs') ?? JOB_MS);
      const list = [...jobs.values()];
      list.forEach((job, k) => setTimeout(() => complete(job), hold + Math.floor((spread * k) / list.length)).unref());
      return send(res, 200, { code: 200, msg: 'success', data: { jobs: list.length } });
    }
    if (url.pathname === '/stats') {
      const list = [...jobs.values()].map((j) => [j.prompt, j.doneAt, j.notify ? 1 : 0]);
      return send(res, 200, { ...stats, jobs: list });
    }
    send(res, 404, { code: 404, msg: 'no route', data: null });
  });
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const a = server.address();
  base = `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}`;
  console.log(`fake kie listening on ${base}`);
});
