// Parcel developers page: progressive enhancement only. Every page works without this file.
'use strict';
(function () {
  // A page answering a form post becomes a plain GET entry, so reloading it sends nothing twice.
  var canonical = document.body.getAttribute('data-canonical');
  if (canonical && window.history.replaceState) window.history.replaceState(null, '', canonical);

  // Copy buttons next to a key or secret shown once.
  document.querySelectorAll('button[data-copy]').forEach(function (button) {
    var input = document.getElementById(button.getAttribute('data-copy'));
    if (!input) return;
    var status = button.closest('.once') && button.closest('.once').querySelector('.copy-status');
    button.hidden = false;
    button.addEventListener('click', function () {
      var done = function () {
        button.textContent = 'Copied';
        if (status) status.textContent = 'Copied to the clipboard.';
        setTimeout(function () {
          button.textContent = 'Copy';
        }, 2000);
      };
      var fallback = function () {
        input.select();
        try {
          document.execCommand('copy');
          done();
        } catch {
          if (status) status.textContent = 'Select the text and copy it.';
        }
      };
      if (navigator.clipboard && window.isSecureContext)
        navigator.clipboard.writeText(input.value).then(done, fallback);
      else fallback();
    });
  });

  // Destructive forms ask first in a dialog; the server asks on a page when this never runs.
  var dialog = document.getElementById('confirm-dialog');
  if (dialog && typeof dialog.showModal === 'function') {
    document.addEventListener('submit', function (event) {
      var form = event.target;
      if (!(form instanceof HTMLFormElement) || !form.hasAttribute('data-confirm')) return;
      event.preventDefault();
      var opener = event.submitter || form.querySelector('button');
      document.getElementById('confirm-title').textContent = form.getAttribute('data-confirm-title');
      document.getElementById('confirm-text').textContent = form.getAttribute('data-confirm');
      var ok = document.getElementById('confirm-ok');
      ok.textContent = form.getAttribute('data-confirm-label');
      ok.className = opener && opener.classList.contains('danger') ? 'danger' : '';
      dialog.returnValue = '';
      dialog.addEventListener(
        'close',
        function () {
          if (dialog.returnValue !== 'ok') {
            if (opener) opener.focus();
            return;
          }
          var confirmed = document.createElement('input');
          confirmed.type = 'hidden';
          confirmed.name = 'confirm';
          confirmed.value = 'yes';
          form.appendChild(confirmed);
          form.submit();
        },
        { once: true },
      );
      dialog.showModal();
    });
  }

  // Absolute times in the reader's own time zone (the server writes UTC).
  document.querySelectorAll('time[data-local]').forEach(function (el) {
    var date = new Date(el.getAttribute('datetime'));
    if (isNaN(date.getTime())) return;
    el.title = el.textContent;
    el.textContent = date.toLocaleString(
      undefined,
      el.getAttribute('data-local') === 'hour'
        ? { dateStyle: 'medium', timeStyle: 'short' }
        : { dateStyle: 'medium', timeStyle: 'medium' },
    );
  });

  // Chart hour labels: the server writes the UTC hour; show the reader's own time of that instant.
  var zone = '';
  try {
    zone = Intl.DateTimeFormat().resolvedOptions().timeZone || '';
  } catch {
    zone = '';
  }
  document.querySelectorAll('[data-hour]').forEach(function (el) {
    var date = new Date(el.getAttribute('data-hour'));
    if (isNaN(date.getTime())) return;
    el.textContent =
      el.getAttribute('data-format') === 'day'
        ? date.toLocaleDateString(undefined, { weekday: 'short', day: 'numeric' })
        : date.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
  });
  document.querySelectorAll('[data-zone-note]').forEach(function (el) {
    el.textContent = zone
      ? 'Hours start on the hour in UTC; labels in your time zone (' + zone + ').'
      : 'Hours start on the hour in UTC; labels in your time zone.';
  });

  // A form that came back with an error: take the keyboard there.
  var alert = document.querySelector('[data-autofocus]');
  if (alert) alert.focus();
})();
