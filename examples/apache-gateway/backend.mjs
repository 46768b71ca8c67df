// A team's own backend, drain-correct the way seed 001 teaches: after SIGTERM it keeps accepting new
// connections (peers have not yet seen the endpoint removal), stops keep-alive so clients move on
// between requests, and exits once its last connection closes or DRAIN_SECONDS have passed.
import { createServer } from 'node:http';

const pod = process.env.POD_NAME ?? 'backend';
const drainSeconds = Number(process.env.DRAIN_SECONDS ?? '5');
let draining = false;

const server = createServer((req, res) => {
  // The pod that served each request, for zerodrop's attribution of every response.
  res.setHeader('x-zerodrop-pod', pod);
  if (draining) res.setHeader('connection', 'close');
  // What zerodrop's backend scenarios ask for: / at once, /delay?ms=N after N ms, /healthz.
  const url = new URL(req.url ?? '/', 'http://backend');
  const delay = url.pathname === '/delay' ? Number(url.searchParams.get('ms') ?? '0') : 0;
  setTimeout(() => res.end(`hello from ${pod}\n`), Math.min(delay, 60_000));
});
server.keepAliveTimeout = 75_000;
server.listen(Number(process.env.PORT), process.env.POD_IP);

process.on('SIGTERM', () => {
  draining = true;
  // Keep listening for a while: the load balancers may still send new connections, each node until
  // its own sync (in backend-sigterm-keeps-accepting, 2 s and each node up to 1 s later), so 3.5 s;
  // with a preStop before it, as in backend-delete-http, the pod still exits within its grace period.
  setTimeout(() => {
    server.close(() => process.exit(0));
    server.closeIdleConnections();
  }, 3_500);
  setTimeout(() => process.exit(0), drainSeconds * 1000).unref();
});
