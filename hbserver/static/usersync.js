/*
 * hbserver user-sync helper, shared by load-cookie.html and load-cookie-with-consent.html.
 *
 * Reads the page's query parameters, POSTs them to /cookie_sync as a CORS simple request
 * (Content-Type text/plain, with credentials), then loads each returned sync URL of a bidder
 * without a cookie: `redirect`/`image` as an <img> pixel, `iframe` as a hidden iframe.
 * Nothing from the query string or the response is written as HTML; only http(s) URLs are used.
 */
(function () {
  'use strict';

  var REQUEST_TIMEOUT_MS = 5000;

  /* An absolute http(s) URL (a scheme-relative one takes this page's scheme), or null. */
  function httpUrl(value) {
    if (typeof value !== 'string' || !/^(https?:)?\/\/[^/]/i.test(value)) return null;
    try {
      var url = new URL(value, window.location.href);
      return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null;
    } catch (e) {
      return null;
    }
  }

  function positiveInt(value) {
    return /^\d{1,9}$/.test(value || '') && Number(value) > 0 ? Number(value) : undefined;
  }

  /* `k:v,k:v` -> {k: v}; all-digit values become numbers (as prebid-universal-creative does). */
  function parseArgs(value) {
    var args = {};
    (value || '').split(',').forEach(function (pair) {
      var at = pair.indexOf(':');
      var key = at > 0 ? pair.slice(0, at) : '';
      var val = at > 0 ? pair.slice(at + 1) : '';
      if (!key || !val || key === '__proto__') return;
      args[key] = /^\d+$/.test(val) && Number.isSafeInteger(Number(val)) ? Number(val) : val;
    });
    return args;
  }

  function readParams(search) {
    var q = new URLSearchParams(search === undefined ? window.location.search : search);
    var endpoint = q.get('endpoint');
    var endpointUrl = endpoint ? httpUrl(endpoint) : window.location.origin + '/cookie_sync';
    if (endpoint && !endpointUrl && /^https?%3A/i.test(endpoint)) {
      try { endpointUrl = httpUrl(decodeURIComponent(endpoint)); } catch (e) { /* stays null */ }
    }
    var gdpr = q.get('gdpr');
    return {
      endpoint: endpointUrl,
      limit: positiveInt(q.get('max_sync_count')),
      bidders: (q.get('bidders') || '').split(',').map(function (b) { return b.trim(); })
        .filter(function (b) { return b; }),
      amp: (q.get('source') || '').toLowerCase() === 'amp',
      gdpr: gdpr === '1' ? 1 : gdpr === '0' ? 0 : undefined,  // 1 = in scope, as for /cookie_sync
      gdprConsent: q.get('gdpr_consent') || '',
      args: parseArgs(q.get('args')),
      timeout: positiveInt(q.get('timeout')) || 10000,
      defaultGdprScope: q.get('defaultGdprScope') === '0' ? 0 : 1
    };
  }

  function requestBody(p) {
    var body = {};
    Object.keys(p.args).forEach(function (k) { body[k] = p.args[k]; });
    if (p.limit) body.limit = p.limit;
    if (p.bidders.length) body.bidders = p.bidders;
    if (p.gdpr !== undefined) body.gdpr = p.gdpr;
    if (p.gdprConsent) body.gdpr_consent = p.gdprConsent;
    if (p.amp) body.filterSettings = { iframe: { bidders: '*', filter: 'exclude' } };
    return body;
  }

  function setState(state, syncs) {
    document.documentElement.setAttribute('data-hbs-sync', state);
    window.hbsUserSyncResult = { state: state, syncs: syncs || 0 };
  }

  /* Load one sync; true when something was loaded. */
  function loadSync(entry, amp) {
    var sync = entry && entry.usersync;
    var url = sync && httpUrl(sync.url);
    if (!url) return false;
    var el;
    if (sync.type === 'redirect' || sync.type === 'image') {
      el = document.createElement('img');
      el.alt = '';
    } else if (sync.type === 'iframe' && !amp) {
      el = document.createElement('iframe');
      el.title = 'user sync';
      el.setAttribute('aria-hidden', 'true');
    } else {
      return false;
    }
    el.width = 0;
    el.height = 0;
    el.style.cssText = 'display:none;border:0;width:0;height:0';
    el.src = url;
    document.body.appendChild(el);
    return true;
  }

  function run(p) {
    if (!p.endpoint) {
      console.warn('hbserver usersync: endpoint must be an http(s) URL');
      setState('bad-endpoint');
      return Promise.resolve(0);
    }
    setState('requesting');
    var abort = new AbortController();
    var timer = setTimeout(function () { abort.abort(); }, REQUEST_TIMEOUT_MS);
    return fetch(p.endpoint, {
      method: 'POST',
      credentials: 'include',
      headers: { 'Content-Type': 'text/plain' },
      body: JSON.stringify(requestBody(p)),
      signal: abort.signal
    }).then(function (response) {
      if (!response.ok) throw new Error('/cookie_sync answered ' + response.status);
      return response.json();
    }).then(function (result) {
      var entries = result && Array.isArray(result.bidder_status) ? result.bidder_status : [];
      var syncs = 0;
      for (var i = 0; i < entries.length && !(p.limit && syncs >= p.limit); i++) {
        if (entries[i] && entries[i].no_cookie === true && loadSync(entries[i], p.amp)) syncs++;
      }
      setState('done', syncs);
      return syncs;
    }).catch(function (err) {
      console.warn('hbserver usersync:', err && err.message);
      setState('error');
      return 0;
    }).finally(function () {
      clearTimeout(timer);
    });
  }

  /* Consent page: ask the AMP parent for consent, then call done(message) or done(null) on timeout. */
  function askConsent(timeoutMs, done) {
    var finished = false;
    function finish(data) {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      window.removeEventListener('message', onMessage);
      done(data);
    }
    function onMessage(event) {
      if (event.source !== window.parent) return;
      var data = event.data;
      if (typeof data === 'string') {
        try { data = JSON.parse(data); } catch (e) { return; }
      }
      if (data && typeof data === 'object' && data.type === 'consent-data') finish(data);
    }
    window.addEventListener('message', onMessage);
    var timer = setTimeout(function () { finish(null); }, timeoutMs);
    window.parent.postMessage({ sentinel: 'amp', type: 'send-consent-data' }, '*');
  }

  function flag(value) {
    if (value === true || value === 1) return true;
    if (value === false || value === 0) return false;
    return undefined;
  }

  /* Apply a consent-data message (or null after the timeout); false when no sync may run. */
  function applyConsent(p, message) {
    if (!message) {
      if (p.defaultGdprScope !== 0) return false;
      p.gdpr = 0;
      p.gdprConsent = '';
      return true;
    }
    var meta = message.consentMetadata && typeof message.consentMetadata === 'object' ? message.consentMetadata : {};
    var applies = flag(meta.gdprApplies);
    if (applies === undefined) applies = flag(message.gdprApplies);
    if (applies === undefined) applies = p.defaultGdprScope === 1;
    p.gdpr = applies ? 1 : 0;
    p.gdprConsent = applies && typeof message.consentString === 'string' ? message.consentString : '';
    return true;
  }

  function runWithConsent(p) {
    setState('waiting-for-consent');
    askConsent(p.timeout, function (message) {
      if (applyConsent(p, message)) {
        run(p);
      } else {
        setState('no-consent');
      }
    });
  }

  window.hbsUserSync = {
    readParams: readParams,
    requestBody: requestBody,
    run: run,
    runWithConsent: runWithConsent
  };
})();
