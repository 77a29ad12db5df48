// The side of an open conversation: who the visitor is (GET /contacts/{id}: the page they
// wrote from, where they came from, their language and browser, first and last seen) and the
// contact's appointments (booked, listed and cancelled here). Everything shown is inserted as
// text; only http(s) addresses become links.

export function browserName(userAgent) {
  if (!userAgent) return null;
  var browsers = [
    [/Edg(?:e|A|iOS)?\/(\d+)/, 'Edge'],
    [/OPR\/(\d+)/, 'Opera'],
    [/SamsungBrowser\/(\d+)/, 'Samsung Internet'],
    [/(?:Firefox|FxiOS)\/(\d+)/, 'Firefox'],
    [/(?:CriOS|HeadlessChrome|Chrome)\/(\d+)/, 'Chrome'],
    [/Version\/(\d+).*Safari\//, 'Safari'],
  ];
  var systems = [
    [/Windows/, 'Windows'],
    [/iPhone|iPad|iPod/, 'iOS'],
    [/Android/, 'Android'],
    [/CrOS/, 'ChromeOS'],
    [/Macintosh|Mac OS X/, 'macOS'],
    [/Linux/, 'Linux'],
  ];
  var name = null;
  for (var i = 0; i < browsers.length && !name; i += 1) {
    var match = browsers[i][0].exec(userAgent);
    if (match) name = browsers[i][1] + ' ' + match[1];
  }
  var system = null;
  for (var j = 0; j < systems.length && !system; j += 1) {
    if (systems[j][0].test(userAgent)) system = systems[j][1];
  }
  if (!name) return userAgent.length > 60 ? userAgent.slice(0, 59) + '…' : userAgent;
  return system ? name + ' on ' + system : name;
}

/** An http(s) address, or null for anything else (never a javascript: link). */
export function webAddress(value) {
  if (typeof value !== 'string') return null;
  try {
    var url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:' ? url.href : null;
  } catch (error) {
    return null;
  }
}

export function timeElement(iso, options) {
  var time = document.createElement('time');
  time.dateTime = iso;
  var date = new Date(iso);
  time.textContent = isNaN(date.getTime()) ? iso : date.toLocaleString([], options || { dateStyle: 'medium', timeStyle: 'short' });
  return time;
}

function link(address, text) {
  var anchor = document.createElement('a');
  anchor.href = address;
  anchor.target = '_blank';
  anchor.rel = 'noopener noreferrer';
  anchor.textContent = text;
  return anchor;
}

/**
 * el: visitorFacts, visitorNotice, appointments, appointmentsEmpty, book, appointmentTitle,
 * appointmentStart, appointmentsNotice. api: the REST client; confirm: the confirmation dialog.
 */
export function createDetails(el, api, confirm) {
  var contactId = null;

  function notice(target, text) {
    target.textContent = text;
    target.hidden = !text;
  }

  function fact(term, value) {
    if (value === null || value === undefined || value === '') return;
    var dt = document.createElement('dt');
    dt.textContent = term;
    var dd = document.createElement('dd');
    if (typeof value === 'string') dd.textContent = value;
    else dd.appendChild(value);
    el.visitorFacts.appendChild(dt);
    el.visitorFacts.appendChild(dd);
  }

  function addressFact(term, value) {
    if (!value) return;
    var address = webAddress(value);
    fact(term, address ? link(address, value) : value);
  }

  /** The contact as GET /contacts/{id} answered it. */
  function showContact(contact) {
    el.visitorFacts.textContent = '';
    notice(el.visitorNotice, '');
    var widget = contact.widget || {};
    if (contact.email) fact('E-mail', contact.email);
    if (contact.phoneNumber) fact('Phone', contact.phoneNumber);
    addressFact('Page', widget.page_url);
    addressFact('Came from', widget.referrer);
    fact('Language', widget.language);
    if (widget.user_agent) {
      var browser = document.createElement('span');
      browser.textContent = browserName(widget.user_agent);
      browser.title = widget.user_agent;
      fact('Browser', browser);
    }
    if (widget.first_seen_at) fact('First seen', timeElement(widget.first_seen_at));
    if (widget.last_seen_at) fact('Last seen', timeElement(widget.last_seen_at));
    if (widget.name) fact('Widget', widget.name);
    if (contact.tags && contact.tags.length) fact('Tags', contact.tags.join(', '));
    if (!el.visitorFacts.firstChild) fact('Channel', contact.channel || 'Unknown');
  }

  function showAppointments(appointments) {
    el.appointments.textContent = '';
    appointments
      .slice()
      .sort(function (a, b) { return Date.parse(a.starts_at) - Date.parse(b.starts_at); })
      .forEach(function (appointment) {
        var item = document.createElement('li');
        item.className = 'appointment' + (appointment.status === 'cancelled' ? ' cancelled' : '');
        var title = document.createElement('span');
        title.className = 'appointment-title';
        title.textContent = appointment.title;
        item.appendChild(title);
        item.appendChild(timeElement(appointment.starts_at, { weekday: 'short', day: 'numeric', month: 'short', hour: '2-digit', minute: '2-digit' }));
        if (appointment.status === 'cancelled') {
          var state = document.createElement('span');
          state.className = 'appointment-state';
          state.textContent = 'Cancelled';
          item.appendChild(state);
        } else {
          var cancel = document.createElement('button');
          cancel.type = 'button';
          cancel.className = 'small';
          cancel.textContent = 'Cancel';
          cancel.setAttribute('aria-label', 'Cancel appointment: ' + appointment.title);
          cancel.addEventListener('click', function () { cancelAppointment(appointment, item); });
          item.appendChild(cancel);
        }
        el.appointments.appendChild(item);
      });
    el.appointmentsEmpty.hidden = appointments.length > 0;
  }

  function loadAppointments(forContact) {
    return api('/contacts/' + encodeURIComponent(forContact) + '/appointments?limit=100')
      .then(function (body) {
        if (forContact === contactId) showAppointments(body.appointments || []);
      })
      .catch(function (error) {
        if (forContact === contactId) notice(el.appointmentsNotice, 'Appointments: ' + error.message);
      });
  }

  function cancelAppointment(appointment, item) {
    var forContact = contactId;
    confirm({ title: 'Cancel this appointment?', text: appointment.title + ', ' + item.querySelector('time').textContent + '.', action: 'Cancel appointment' }).then(function (confirmed) {
      if (!confirmed) return;
      api('/appointments/' + encodeURIComponent(appointment.id) + '/cancel', { method: 'POST' })
        .then(function () { return loadAppointments(forContact); })
        .then(function () { if (forContact === contactId) el.appointmentTitle.focus(); })
        .catch(function (error) { notice(el.appointmentsNotice, 'Not cancelled: ' + error.message); });
    });
  }

  el.book.addEventListener('submit', function (event) {
    event.preventDefault();
    var forContact = contactId;
    var starts = new Date(el.appointmentStart.value);
    var title = el.appointmentTitle.value.trim();
    if (!forContact || !title || isNaN(starts.getTime())) return;
    notice(el.appointmentsNotice, '');
    api('/contacts/' + encodeURIComponent(forContact) + '/appointments', { method: 'POST', body: { title: title, starts_at: starts.toISOString() } })
      .then(function () {
        if (forContact !== contactId) return;
        el.book.reset();
        return loadAppointments(forContact);
      })
      .catch(function (error) { if (forContact === contactId) notice(el.appointmentsNotice, 'Not booked: ' + error.message); });
  });

  return {
    /** A conversation was opened: its appointments are read; its contact comes from the caller. */
    open: function (id) {
      contactId = id;
      el.visitorFacts.textContent = '';
      el.appointments.textContent = '';
      el.appointmentsEmpty.hidden = true;
      el.book.reset();
      notice(el.visitorNotice, '');
      notice(el.appointmentsNotice, '');
      loadAppointments(id);
    },
    close: function () {
      contactId = null;
    },
    showContact: showContact,
    contactFailed: function (error) {
      notice(el.visitorNotice, error.message);
    },
  };
}
