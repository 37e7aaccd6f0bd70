// Honest about the policy: what the service dropped or refused, the declared domains the
// served policy lacks, the opt-in that would allow a refused capability, and, for a host that
// writes its views' policies, a view that came without one.
//
// spec: the host applies the server's declared domains, and may narrow them; the relay never
// widens a policy, it says what is missing.
//
// Offers the other parts: forgetHints, hintAtOptIn, noteHostWrittenPolicy, reportDroppedSources,
//   reportRefusedPolicy, warnAboutMissingDomains, withPolicyOf.

function reportDroppedSources() {
  (config.dropped || []).forEach(function (d) {
    warn('dropped ' + d.list + ' entry ' + JSON.stringify(d.entry) + ': ' + d.reason);
  });
  var unlisted = (config.droppedCount || 0) - (config.dropped || []).length;
  if (unlisted > 0) warn('... and ' + unlisted + ' more dropped entries');
}

// The host signs its policies and this page's ?csp= did not verify: the service served the
// spec's default policy instead, and says why.
function reportRefusedPolicy() {
  if (typeof config.policyRefused !== 'string') return;
  warn('this page has the spec\'s default policy, not its ?csp=: ' + config.policyRefused + '.' +
    guide('signature-refused'));
}

// spec: the host applies the server's declared domains. The header was fixed when this page
// was requested; domains it still lacks were left out of the host's ?csp=, dropped by the
// service, or could not be carried by the relay's reload (`unreloaded`, see upgrade): say which.
function warnAboutMissingDomains(requested, unreloaded) {
  // The host wrote the view's policy: what it allows is in the view's HTML, not known here.
  if (hostPolicy) return;
  var why = unreloaded ? 'this page could not reload itself with them (see above).' :
    'the host\'s ' + (signedPolicies ? 'signed ' : '') + '?csp= did not name them, or the service dropped ' +
      'them (see above).';
  if (signedPolicies && typeof config.policyRefused === 'string') {
    why = 'the signature of this page\'s ?csp= was refused (see above).';
  }
  missingDomains(requested).forEach(function (missing) {
    warn('the view asks for ' + missing.list + ' ' + missing.domains.join(', ') +
      ' but this page\'s policy does not allow them: ' + why + guide('missing-domains'));
  });
}

// The declared domains the served policy does not cover, by list: [{list, domains}].
function missingDomains(requested) {
  if (requested === null || typeof requested !== 'object') return [];
  var applied = config.applied || {};
  var missing = [];
  DOMAIN_LISTS.forEach(function (list) {
    var asked = Array.isArray(requested[list]) ? requested[list] : [];
    var have = Array.isArray(applied[list]) ? applied[list] : [];
    var domains = asked.filter(function (domain) {
      return typeof domain === 'string' && !have.some(function (source) {
        return covers(source, domain);
      });
    });
    if (domains.length) missing.push({ list: list, domains: domains });
  });
  return missing;
}

// Some refusals are not about domains: the operator can allow them per host (view_opt_ins in
// docs/configuration.md). Name the one that would, once per view, rather than leave the
// developer with the browser's bare "refused to evaluate". Which opt-in adds which source where
// is the shared vocabulary's (OPT_INS); what each refusal is, in words, is this table's.
var REFUSED = {
  "script-src 'unsafe-eval'": 'eval or new Function',
  "script-src 'wasm-unsafe-eval'": 'WebAssembly compilation',
  'script-src data:': 'a script from a data: URL',
  'img-src blob:': 'a blob: image',
  'media-src blob:': 'blob: media',
  'worker-src blob:': 'a worker from a blob: URL'
};
// spec (CSP 3, violation reports): the blocked URI of an eval or a WebAssembly compilation.
var BLOCKED_KEYWORDS = { eval: "'unsafe-eval'", 'wasm-eval': "'wasm-unsafe-eval'" };

function hintAtOptIn(directive, blockedURI) {
  var blocked = String(blockedURI || '').replace(/:.*$/, '');
  var source = BLOCKED_KEYWORDS[blocked] || blocked + ':';
  // A directive by its family: script-src-elem is script-src's for a script element. An eval
  // is script-src's whatever directive an engine names.
  var family = String(directive || '').replace(/-(elem|attr)$/, '');
  OPT_INS.forEach(function (optIn) {
    optIn.adds.forEach(function (add) {
      var keyword = BLOCKED_KEYWORDS[blocked] !== undefined;
      if (add[1] !== source || (!keyword && add[0] !== family) || state.hinted[optIn.name]) return;
      state.hinted[optIn.name] = true;
      hintOnce(optIn.name, add, directive);
    });
  });
}

// A new view's developer hears each hint again.
function forgetHints() {
  state.hinted = {};
}

function hintOnce(name, add, directive) {
  var what = REFUSED[add.join(' ')] || add[1] + ' in ' + add[0];
  var allow = 'operator can allow it for this host: view_opt_ins = ["' + name + '"].';
  if (add[1] === "'unsafe-eval'") {
    // Many libraries only probe for eval and work without it (zod 4 tries new Function('') in
    // every ext-apps example view): a refusal is not a need, and is said as a note.
    note('the view\'s policy refused ' + what + ' (' + directive + '); if the view needs ' +
      'it, the ' + allow + guide('refused-eval'));
    return;
  }
  var also = '';
  if (add[0] === 'worker-src') {
    also = ' A worker that imports a data: module also needs "' + optInAdding('script-src', 'data:') + '".';
  }
  warn('the view\'s policy refused ' + what + ' (' + directive + '). The ' + allow + also +
    guide('refused-capability'));
}

// The opt-in that adds `source` to `directive`.
function optInAdding(directive, source) {
  var found = OPT_INS.filter(function (optIn) {
    return optIn.adds.some(function (add) { return add[0] === directive && add[1] === source; });
  });
  return found.length ? found[0].name : null;
}

// A host that writes the view's policy into its HTML and declares no domain to this page (MCP
// Inspector 2.x does) gets both policies, and this page's header allows no declared domain:
// what the <meta> allows beyond it stays blocked. Said once per resource, with a link to the fix.
function noteHostWrittenPolicy(params) {
  var lists = params.csp && typeof params.csp === 'object' ? params.csp : {};
  var declared = DOMAIN_LISTS.some(function (list) {
    return Array.isArray(lists[list]) && lists[list].length > 0;
  });
  if (declared || !startsWithPolicy(params.html)) return;
  warn('this resource carries its own CSP <meta> and the host declared no domains: both ' +
    'policies apply.' + guide('host-written-policy'));
}

// SECURITY: for a host that writes its views' policies (view_policy = "host"), a view whose HTML
// does not start with a CSP <meta> (see 42-meta.js) would run with no policy at all, or run
// its first scripts before its policy: it gets the spec's default instead, written first, and
// the developer is told loudly. A <meta> policy can only narrow what is already in force; the
// default is what is, here. It must land in <head>: after a doctype only when nothing but
// HTML whitespace comes before that (a byte order mark or U+00A0 there is text, which starts
// the body), and otherwise before everything (the view is then read without its doctype).
function withPolicyOf(html) {
  if (startsWithPolicy(html)) return html;
  warn('this resource\'s HTML does not start with a CSP <meta> (view_policy = "host"): it ' +
    'gets the spec\'s default policy.' + guide('view-without-policy'));
  var meta = '<meta http-equiv="Content-Security-Policy" content="' +
    String(config.defaultPolicy || "default-src 'none'").replace(/&/g, '&amp;').replace(/"/g, '&quot;')
      .replace(/</g, '&lt;') + '">';
  var doctype = /^[\t\n\f\r ]*<!doctype[^>]*>/i.exec(html);
  return doctype ? doctype[0] + meta + html.slice(doctype[0].length) : meta + html;
}
