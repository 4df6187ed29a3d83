// Posts several request bodies at once over HTTPS from its own process, the way the apiserver is a process
// of its own: the client's TLS work (up to 16 × 7 MiB) does not share the server's CPU thread, so a test
// measures the server. Input on stdin: {"url","ca","requests":[{"path","file"}]}; output on stdout: one JSON
// array of {status, ms, body} in request order, ms counted from when every body is read and the first sent.
import https from 'node:https';
import { readFileSync } from 'node:fs';

interface Input {
  url: string;
  ca: string;
  requests: { path: string; file: string }[];
}
interface Answer {
  status: number;
  ms: number;
  body: string;
}

const input = JSON.parse(readFileSync(0, 'utf8')) as Input;
const bodies = input.requests.map((r) => readFileSync(r.file));
const t0 = performance.now();
const answers = await Promise.all(
  input.requests.map(
    (r, i: number) =>
      new Promise<Answer>((resolve, reject) => {
        const req = https.request(
          input.url + r.path,
          { method: 'POST', ca: input.ca, agent: false, headers: { 'content-type': 'application/json' } },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => {
              chunks.push(c);
            });
            res.on('end', () =>
              resolve({
                status: res.statusCode ?? 0,
                ms: performance.now() - t0,
                body: Buffer.concat(chunks).toString('utf8'),
              }),
            );
          },
        );
        req.on('error', reject);
        req.end(bodies[i]);
      }),
  ),
);
process.stdout.write(JSON.stringify(answers));
