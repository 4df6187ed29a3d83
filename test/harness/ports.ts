// Random free loopback ports: bind port 0, read the port, close. Another process could take the port
// before the server binds it; on a test machine that window is small, and a bind failure surfaces as
// a start-up error that names the port.
import { createServer } from 'node:net';

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => {
        if (addr && typeof addr === 'object') resolve(addr.port);
        else reject(new Error('no port assigned'));
      });
    });
  });
}

/** n distinct free ports. */
export async function freePorts(n: number): Promise<number[]> {
  const out = new Set<number>();
  while (out.size < n) out.add(await freePort());
  return [...out];
}
