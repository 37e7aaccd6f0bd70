// The inner frame's sandbox and permissions, and what a host asked for that its views may not get.
//
// spec: the view's sandbox defaults to "allow-scripts allow-same-origin allow-forms" and a host
// may ask for other tokens; requested permissions become features of the frame's allow.
// SECURITY: no token outside the operator's view_sandbox, never allow-top-navigation*; every
// spec permission not requested is denied; beyond them, only the features the operator
// granted (view_features). sandboxTokens and allowAttribute are unit-tested.
//
// Offers the other parts: allowAttribute, sandboxTokens, warnAboutPermissions.

function sandboxTokens(override) {
  if (override === undefined || override === null) {
    // The operator's per-host default (view_sandbox_default), or the spec's; within the ceiling.
    var fallback = Array.isArray(config.viewSandboxDefault) ? config.viewSandboxDefault : DEFAULT_SANDBOX;
    return fallback.filter(function (token) { return viewSandbox.indexOf(token) !== -1; });
  }
  if (typeof override !== 'string') {
    // A malformed override must not fall back to the wider default.
    warn('params.sandbox is not a string: mounting with "allow-scripts" only');
    return ['allow-scripts'];
  }
  var tokens = [];
  var refused = [];
  override.split(/\s+/).forEach(function (token) {
    if (!token) return;
    var list = viewSandbox.indexOf(token) === -1 ? refused : tokens;
    if (list.indexOf(token) === -1) list.push(token);
  });
  warnAboutRefusedTokens(refused);
  return tokens;
}

// Say once per page which tokens a host asked for that its views may not get, and link the
// operator's fix: host libraries ask for more than the spec's default (pop-ups, modals), and
// a view that needs one then fails in a way the console alone explains.
function warnAboutRefusedTokens(refused) {
  // A Set, not an object's keys: a token named like an object's member (toString, __proto__)
  // is a token like any other.
  var fresh = refused.filter(function (token) { return !state.sandboxWarned.has(token); });
  if (!fresh.length) return;
  fresh.forEach(function (token) { state.sandboxWarned.add(token); });
  var never = fresh.filter(function (token) { return token.indexOf('allow-top-navigation') === 0; });
  var widen = fresh.filter(function (token) { return never.indexOf(token) === -1; });
  var text = 'ignored sandbox tokens the host asked for:';
  if (widen.length) {
    text += ' "' + widen.join(' ') + '": not in this host entry\'s view_sandbox ("' + viewSandbox.join(' ') + '").';
  }
  if (never.length) text += ' "' + never.join(' ') + '": never given.';
  warn(text + guide('sandbox-tokens'));
}

// spec: each requested permission becomes a feature of the inner frame's `allow`, joined
// with "; ". A feature reaches the view only if the host's outer iframe delegates it too.
// SECURITY: the features not requested are denied outright ('none'): their default allowlist
// is 'self', so a same-origin view would otherwise inherit whatever the host delegated to us.
// A bare feature means "the frame's own origin", which an opaque view's origin never is: for
// an opaque view a requested feature is delegated to `*`, the only allowlist it matches (it
// follows the frame, so a view that navigates itself away keeps it; the relay stops there).
// The features an operator may grant (VIEW_FEATURES, the shared vocabulary) follow: each one
// the host entry grants (view_features) delegated alike, every other one denied, since a
// same-origin view would otherwise inherit it from whatever the host delegated to this page.
// Where the engine lists the features it knows (Chromium), a denial it does not know is left
// out: it would only log that it does not know it.
function allowAttribute(permissions, opaque) {
  var requested = requestedPermissions(permissions);
  var delegated = opaque ? ' *' : '';
  var policy = document.featurePolicy || document.permissionsPolicy;
  var known = policy && typeof policy.features === 'function' ? policy.features() : VIEW_FEATURES;
  var spec = Object.keys(PERMISSION_FEATURES).map(function (key) {
    if (!requested[key]) return PERMISSION_FEATURES[key] + " 'none'";
    return PERMISSION_FEATURES[key] + delegated;
  });
  var extra = VIEW_FEATURES.filter(function (feature) {
    return viewFeatures.indexOf(feature) !== -1 || known.indexOf(feature) !== -1;
  }).map(function (feature) {
    return feature + (viewFeatures.indexOf(feature) === -1 ? " 'none'" : delegated);
  });
  return spec.concat(extra).join('; ');
}

function requestedPermissions(permissions) {
  return permissions !== null && typeof permissions === 'object' ? permissions : {};
}

// Say when a requested permission cannot reach the view, where this page can tell: the
// host's iframe does not delegate it (engines with a permissions-policy API), or the view is
// opaque and wants a camera or microphone, which Chromium and Firefox never give an opaque
// origin (WebKit does, through the `*` above).
function warnAboutPermissions(permissions, opaque) {
  var requested = requestedPermissions(permissions);
  var policy = document.featurePolicy || document.permissionsPolicy;
  Object.keys(PERMISSION_FEATURES).forEach(function (key) {
    if (!requested[key]) return;
    var feature = PERMISSION_FEATURES[key];
    if (policy && typeof policy.allowsFeature === 'function' && !policy.allowsFeature(feature)) {
      warn('the view asks for ' + key + ' but the host\'s iframe does not delegate ' +
        feature + '.' + guide('permission-not-delegated'));
    }
    // Both may hold: delegating it is then not enough.
    if (opaque && (key === 'camera' || key === 'microphone')) {
      warn('the view asks for ' + key + ' but it is opaque (no allow-same-origin).' +
        guide('permission-opaque'));
    }
  });  warnAboutUndelegatedFeatures(policy);
}

// Say once per page which of the operator's granted features the host's iframe does not
// delegate, where this page can tell: fullscreen in every engine (fullscreenEnabled), any
// feature the engine's permissions-policy API knows. Without the host's delegation the grant
// gives the view nothing.
function warnAboutUndelegatedFeatures(policy) {
  if (state.featuresWarned) return;
  state.featuresWarned = true;
  var known = policy && typeof policy.features === 'function' ? policy.features() : [];
  var missing = viewFeatures.filter(function (feature) {
    if (feature === 'fullscreen' && document.fullscreenEnabled === false) return true;
    return known.indexOf(feature) !== -1 && !policy.allowsFeature(feature);
  });
  if (missing.length) {
    warn('this host entry grants its views ' + missing.join(', ') +
      ' but the host\'s iframe does not delegate it.' + guide('feature-not-delegated'));
  }
}
