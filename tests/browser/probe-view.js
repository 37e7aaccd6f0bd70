// A view built on the real MCP Apps SDK (`App`) that probes what its policy lets it reach and
// tells the host through a tools/call: the page sets window.PROBE = {connect, resource, dropped}
// (URLs; each optional) and camera (true: ask for one), and every fetch or image load is
// reported as 'ok' or 'blocked', the camera as 'granted' or 'denied'.
import { App } from '@modelcontextprotocol/ext-apps';

const probe = window.PROBE;
const results = (window.results = {});

async function fetched(url) {
  try {
    const response = await fetch(url);
    return response.ok ? 'ok' : `status ${response.status}`;
  } catch {
    return 'blocked';
  }
}

function imageLoads(url) {
  return new Promise((resolve) => {
    const image = new Image();
    image.onload = () => resolve('ok');
    image.onerror = () => resolve('blocked');
    image.src = url;
  });
}

// Each engine's fake camera answers at once; a prompt nobody answers would never settle.
function camera() {
  return Promise.race([
    navigator.mediaDevices.getUserMedia({ video: true }).then((stream) => {
      stream.getTracks().forEach((track) => track.stop());
      return 'granted';
    }, () => 'denied'),
    new Promise((resolve) => setTimeout(() => resolve('no answer'), 8000)),
  ]);
}

const app = new App({ name: 'probe view', version: '1.0.0' });
await app.connect();
results.connect = probe.connect ? await fetched(probe.connect) : 'not probed';
results.resource = probe.resource ? await imageLoads(probe.resource) : 'not probed';
results.dropped = probe.dropped ? await fetched(probe.dropped) : 'not probed';
results.camera = probe.camera ? await camera() : 'not probed';
results.origin = self.origin;
document.body.dataset.done = 'true';
await app.callServerTool({ name: 'report', arguments: results });
