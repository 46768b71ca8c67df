// The floor of any HTTP generator on node:net, measured beside zerodrop's: each connection writes a
// fixed keep-alive GET, counts the next read as the response and writes again. No parsing, no
// timer, no record. What separates zerodrop's generator from this row is the cost of what it does
// per request (framing, timeouts, one record each); what separates this row from wrk is Node itself.
// With one request outstanding per connection and nginx's few-byte answers, a read is one whole
// response.
//
//   node src/bench/http-floor.ts <url> <connections> <durationMs>
// prints one JSON line: { requests, seconds, cpuSeconds }.

import net from 'node:net';

export interface FloorRun {
  requests: number;
  seconds: number;
  cpuSeconds: number;
}

export function measureFloor(url: URL, connections: number, durationMs: number): Promise<FloorRun> {
  const request = Buffer.from(`GET ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\n\r\n`, 'latin1');
  const sockets: net.Socket[] = [];
  const readBuffer = Buffer.allocUnsafe(64 * 1024);
  let requests = 0;
  let stopping = false;
  const started = performance.now();
  const cpu = process.cpuUsage();
  return new Promise<FloorRun>((resolve, reject) => {
    for (let i = 0; i < connections; i++) {
      // Reads land in one reused buffer (`onread`), as zerodrop's generator does: no chunk per read.
      const onread = {
        buffer: readBuffer,
        callback: (): boolean => {
          if (stopping) return true;
          requests++;
          socket.write(request);
          return true;
        },
      };
      const socket: net.Socket = net.connect({ host: url.hostname, port: Number(url.port), noDelay: true, onread });
      sockets.push(socket);
      socket.on('connect', () => socket.write(request));
      socket.on('error', (error) => {
        stopping = true;
        for (const s of sockets) s.destroy();
        reject(error);
      });
    }
    setTimeout(() => {
      stopping = true;
      const seconds = (performance.now() - started) / 1000;
      const used = process.cpuUsage(cpu);
      for (const s of sockets) s.destroy();
      resolve({ requests, seconds, cpuSeconds: (used.user + used.system) / 1e6 });
    }, durationMs);
  });
}

if (import.meta.main) {
  const [url = '', connections = '', durationMs = ''] = process.argv.slice(2);
  console.log(JSON.stringify(await measureFloor(new URL(url), Number(connections), Number(durationMs))));
}
