// mcp-use's inspector on a plain Node server, as docs/hosts.md's "any other server" says, in a
// process of its own: the inspector keeps timers of its own alive and answers SIGTERM by
// waiting for its clients, so the test ends it with SIGKILL. argv[2]: the port; argv[3]: mountInspector's
// options as JSON. Prints `listening` once it serves.
import { createServer } from 'node:http';
import { Readable } from 'node:stream';
import { mountInspector } from '@mcp-use/inspector';

const [port, options] = [Number(process.argv[2]), JSON.parse(process.argv[3])];
const handler = mountInspector(options);
createServer(async (req, res) => {
  const url = new URL(req.url, `http://${req.headers.host}`);
  const body = req.method === 'GET' || req.method === 'HEAD' ? undefined : Readable.toWeb(req);
  const answer = await handler(new Request(url, { method: req.method, headers: req.headers, body, duplex: 'half' }));
  res.writeHead(answer.status, Object.fromEntries(answer.headers));
  res.end(Buffer.from(await answer.arrayBuffer()));
}).listen(port, '127.0.0.1', () => console.log('listening'));
