// fleetpolicy console: live updates without a reload. Every data-refresh
// milliseconds, while the tab is visible, the page asks for its own <main>
// again (X-Console-Fragment) and swaps it in when it changed, keeping the
// keyboard focus on the same link. The pages read fine without this script.
(function () {
  'use strict';
  var main = document.getElementById('main');
  var live = document.getElementById('live');
  if (!main || !live || location.pathname === '/login') {
    return;
  }
  var every = parseInt(main.getAttribute('data-refresh'), 10);
  if (!(every > 0)) {
    return;
  }
  var last = null;
  var busy = false;
  function tick() {
    if (document.hidden || busy) {
      return;
    }
    busy = true;
    fetch(location.href, { headers: { 'X-Console-Fragment': '1' }, credentials: 'same-origin', cache: 'no-store' })
      .then(function (r) {
        if (r.status === 401) {
          throw new Error('signed out');
        }
        return r.text();
      })
      .then(function (html) {
        if (html !== last) {
          var active = document.activeElement;
          var href = active && main.contains(active) ? active.getAttribute('href') : null;
          main.innerHTML = html;
          last = html;
          if (href) {
            var again = main.querySelector('a[href="' + CSS.escape(href) + '"]');
            if (again) {
              again.focus();
            }
          }
        }
        live.textContent = 'live, updated ' + new Date().toLocaleTimeString();
      })
      .catch(function (e) {
        live.textContent = 'live updates paused: ' + e.message;
      })
      .finally(function () {
        busy = false;
      });
  }
  setInterval(tick, every);
})();
