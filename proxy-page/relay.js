// The relay for one MCP App view: pinned to one host origin, see protocol.md.
(function () {
  'use strict';
  var config = JSON.parse(document.getElementById('sandbox-config').textContent);
  // spec: the proxy must be framed by the host; alone it has nothing to relay.
  if (window.top === window) {
    var p = document.createElement('p');
    p.className = 'refusal';
    p.textContent = 'This page is an MCP Apps sandbox proxy for ' + config.hostOrigin +
      '. It only runs inside that host\'s iframe.';
    document.body.appendChild(p);
    return;
  }
})();
