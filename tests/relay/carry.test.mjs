// The self-upgrade's carrier: the resource crosses the page's own reload in the frame's name,
// with no storage API, so it works where a browser denies the frame its storage and for a
// resource over any storage quota; it is taken only by the page whose URL names it, and the
// frame gets its own name back at once.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { loadRelay } from './load.mjs';

const PAGE = 'https://chat.sandbox.test/sandbox.html';
const RESOURCE = { html: '<p>view</p>', csp: { connectDomains: ['https://api.example.com'] } };

/** A relay whose frame has the name `name` (what the page before it left), at `href`. */
function frame(name, href = PAGE) {
  const history = { replaced: null, replaceState(_s, _t, url) { history.replaced = url; } };
  const { pathname, search } = new URL(href);
  const scope = { name, history, location: { pathname, search } };
  return loadRelay(['keepResource', 'takeKeptResource', 'state'], { href, scope });
}

/** What the page before the reload leaves in its frame's name for `resource`, under `token`. */
function carried(resource, { token = 'a1b2', held = [], name = '' } = {}) {
  const before = frame(name);
  before.state.held.push(...held);
  before.takeKeptResource();
  assert.equal(before.keepResource({ key: `mcp-sandbox-proxy:kept:${token}`, resource, reloads: 1 }), true, before.logged.join('\n'));
  return before;
}

describe('the resource carried across the reload', () => {
  it('reaches the page its URL names, with the held host messages, and the frame gets its name back', () => {
    const held = [{ jsonrpc: '2.0', method: 'ui/notifications/tool-input', params: { arguments: { a: 1 } } }];
    const before = carried(RESOURCE, { held, name: 'the-hosts-name' });
    const after = frame(beforeName(before), `${PAGE}?csp=x&upgrade=1#sandbox-kept=a1b2`);
    const kept = after.takeKeptResource();
    assert.deepEqual(kept, { resource: RESOURCE, held, reloads: 1 });
    assert.equal(after.window.name, 'the-hosts-name', 'the name the host gave its iframe');
    assert.equal(after.window.history.replaced, '/sandbox.html?csp=x&upgrade=1', 'no fragment left to take again');
  });

  it('a 10 MB resource crosses as a small one does', () => {
    const big = { html: `<p>${'x'.repeat(10 * 1024 * 1024)}</p>` };
    const before = carried(big);
    const after = frame(beforeName(before), `${PAGE}#sandbox-kept=a1b2`);
    assert.equal(after.takeKeptResource().resource.html.length, big.html.length);
    assert.equal(after.window.name, '');
  });

  it('a page whose URL names another token, or none, takes nothing and clears the name', () => {
    for (const href of [`${PAGE}#sandbox-kept=ffff`, PAGE, `${PAGE}#sandbox-kept=`]) {
      const after = frame(beforeName(carried(RESOURCE, { name: 'n' })), href);
      assert.equal(after.takeKeptResource(), null, href);
      assert.equal(after.window.name, 'n', `${href}: the frame's own name, and nothing carried`);
    }
  });

  it('a name not written as the relay writes it is no resource', () => {
    for (const name of ['mcp-sandbox-proxy:kept:a1b2', 'mcp-sandbox-proxy:kept:a1b2:"n"', 'mcp-sandbox-proxy:kept:a1b2:nope\n{}',
      'mcp-sandbox-proxy:kept:a1b2:""\n{"resource":"x","held":[]}', 'someone else\'s name']) {
      const after = frame(name, `${PAGE}#sandbox-kept=a1b2`);
      assert.equal(after.takeKeptResource(), null, name);
      assert.ok(after.logged.some((l) => l.includes('reloaded for a resource that was not kept')), name);
      assert.ok(!after.window.name.startsWith('mcp-sandbox-proxy:'), `${name}: nothing of the relay's is left`);
    }
  });

  it('what cannot be carried is said exactly, and nothing is written', () => {
    const relay = frame('n');
    relay.takeKeptResource();
    const cyclic = { html: 'x' };
    cyclic.self = cyclic;
    assert.equal(relay.keepResource({ key: 'mcp-sandbox-proxy:kept:a1', resource: cyclic, reloads: 1 }), false);
    assert.equal(relay.window.name, 'n');
    assert.ok(relay.logged.some((l) => /cannot carry the resource across the reload .*it is not JSON/.test(l)), relay.logged.join('\n'));
    // A browser that refuses the name (none of the three does at 10 MB; a smaller cap would).
    const refusing = loadRelay(['keepResource', 'takeKeptResource'], { scope: { history: { replaceState() {} } } });
    Object.defineProperty(refusing.window, 'name', { get: () => '', set: () => { throw new RangeError('too long'); } });
    assert.equal(refusing.keepResource({ key: 'mcp-sandbox-proxy:kept:a1', resource: RESOURCE, reloads: 1 }), false);
    assert.ok(refusing.logged.some((l) => /cannot carry .*characters, and the browser refused them: RangeError: too long/.test(l)), refusing.logged.join('\n'));
  });
});

function beforeName(relay) {
  return relay.window.name;
}

describe('a URL that already carries the declaration', () => {
  it('is not reloaded: mcp-use writes it as widget_csp, which the service reads as csp', () => {
    const { policyUrl, WIDGET_CSP_PARAMETER } = loadRelay(['policyUrl', 'WIDGET_CSP_PARAMETER'],
      { href: `${PAGE}?v=%7B%7D&csp_mode=widget-declared&widget_csp=${encodeURIComponent(JSON.stringify(RESOURCE.csp))}` });
    assert.equal(WIDGET_CSP_PARAMETER, 'widget_csp');
    assert.equal(policyUrl(RESOURCE.csp), null);
    assert.equal(policyUrl({ connectDomains: ['https://wider.example'] }), null, 'the host decided, as with csp');
  });
});

describe('what changes while the reload is under way', () => {
  /** A relay on a page without ?csp=, recording each stop and navigation it starts. */
  function reloading() {
    const navigations = [];
    const scope = {
      name: '',
      crypto: globalThis.crypto,
      stop: () => navigations.push('stop'),
      location: { pathname: '/sandbox.html', search: '', replace: (url) => navigations.push(url), reload: () => navigations.push('reload') },
      history: { replaceState: (_s, _t, url) => navigations.push(`replaceState ${url}`) },
    };
    const relay = loadRelay(['reload', 'policyUrl', 'keepInstead', 'hold', 'state'], { scope });
    return { ...relay, navigations };
  }
  const carriedNow = (relay) => JSON.parse(relay.window.name.slice(relay.window.name.indexOf('\n') + 1));

  it('a host message held meanwhile is written under a new token, and the navigation started again: Chromium keeps only the name it began with', () => {
    const relay = reloading();
    const params = { html: '<p>first</p>', csp: RESOURCE.csp };
    assert.equal(relay.reload(params, relay.policyUrl(params.csp), 1), true);
    // It says so, once, naming the guide's entry, before the page goes.
    assert.deepEqual(relay.logged.filter((line) => line.includes('needs another policy')).map((line) => /^\w+/.exec(line)[0]), ['info']);
    assert.ok(relay.logged.some((line) => line.includes('console.md#reload-for-policy')), relay.logged.join('\n'));
    const [stop, first] = relay.navigations;
    assert.equal(stop, 'stop');
    assert.match(first, /\?csp=.*&upgrade=1#sandbox-kept=[0-9a-f]{32}$/);
    const message = { jsonrpc: '2.0', method: 'ui/notifications/tool-input', params: {} };
    relay.hold(message);
    const [stopAgain, again] = relay.navigations.slice(2);
    assert.equal(stopAgain, 'stop');
    const [page, token] = again.split('#sandbox-kept=');
    assert.equal(page, first.split('#')[0], 'the same page again, after the write');
    assert.notEqual(token, first.split('#sandbox-kept=')[1], 'a page begun with the older name can tell');
    assert.ok(relay.window.name.startsWith(`mcp-sandbox-proxy:kept:${token}:`), 'the name carries the token the URL names');
    assert.deepEqual(carriedNow(relay).held, [message]);
  });

  it('a resource that replaces the first goes where it needs: here it needs no reload, so this page again', () => {
    const relay = reloading();
    const first = { html: '<p>first</p>', csp: RESOURCE.csp };
    relay.reload(first, relay.policyUrl(first.csp), 1);
    relay.keepInstead({ html: '<p>second</p>' });
    const [stop, replaced, reloaded] = relay.navigations.slice(-3);
    assert.equal(stop, 'stop');
    // No ?csp=: the served policy is the one it needs. The same URL with a new fragment loads no
    // page, so the page's URL takes the fragment and the page is reloaded.
    assert.match(replaced, /^replaceState https:\/\/chat\.sandbox\.test\/sandbox\.html#sandbox-kept=[0-9a-f]{32}$/);
    assert.equal(reloaded, 'reload');
    assert.equal(carriedNow(relay).resource.html, '<p>second</p>');
  });
});

describe('a page the browser made with an older frame name than its predecessor wrote', () => {
  /** The relay of a page at `hash` whose frame is named `name`, recording what it navigates. */
  function made(name, hash) {
    const navigations = [];
    const scope = {
      name,
      location: { pathname: '/sandbox.html', search: '?csp=x&upgrade=1', reload: () => navigations.push('reload') },
      history: { replaceState: (_s, _t, url) => navigations.push(`replaceState ${url}`) },
    };
    const relay = loadRelay(['reloadForNewerName', 'takeKeptResource'], { href: `${PAGE}?csp=x&upgrade=1${hash}`, scope });
    return { ...relay, navigations };
  }
  const older = beforeName(carried({ html: '<p>first</p>' }, { token: 'aaaa' }));

  it('reloads, leaving the name as it is, for the browser to make it afresh with the newer one', () => {
    const relay = made(older, '#sandbox-kept=bbbb');
    assert.equal(relay.reloadForNewerName(), true);
    assert.deepEqual(relay.navigations, ['replaceState #sandbox-kept=bbbb.1', 'reload']);
    assert.equal(relay.window.name, older, 'a write would replace the newer name the browser keeps');
    // So does a page given the frame's name from before any carry.
    assert.equal(made('the-hosts-name', '#sandbox-kept=bbbb').reloadForNewerName(), true);
  });

  it('at most twice: then the page takes nothing and asks for the resource again', () => {
    const second = made(older, '#sandbox-kept=bbbb.1');
    assert.equal(second.reloadForNewerName(), true);
    assert.deepEqual(second.navigations, ['replaceState #sandbox-kept=bbbb.2', 'reload']);
    const last = made(older, '#sandbox-kept=bbbb.2');
    assert.equal(last.reloadForNewerName(), false);
    assert.equal(last.takeKeptResource(), null);
    assert.ok(last.logged.some((l) => l.includes('reloaded for a resource that was not kept')), last.logged.join('\n'));
    assert.equal(last.window.name, '', 'nothing of the relay\'s is left');
  });

  it('a page whose name carries what its URL names, or whose URL names nothing, goes on', () => {
    const newer = beforeName(carried({ html: '<p>second</p>' }, { token: 'bbbb' }));
    for (const hash of ['#sandbox-kept=bbbb', '#sandbox-kept=bbbb.1']) {
      const relay = made(newer, hash);
      assert.equal(relay.reloadForNewerName(), false, hash);
      assert.equal(relay.takeKeptResource().resource.html, '<p>second</p>', hash);
    }
    for (const hash of ['', '#sandbox-kept=', '#other']) {
      assert.equal(made(older, hash).reloadForNewerName(), false, hash);
    }
  });
});
