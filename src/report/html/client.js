// The report page's script: filters the matrix and the scenario sections, and shows tooltips and a
// crosshair with the exact values under the mouse. Plain browser JavaScript, inlined into index.html.
/* global document, window */
(function () {
  'use strict';
  var state = { verdict: 'all', profile: '', scenario: '' };
  var chips = document.querySelectorAll('#filters .chip');
  function matches(el) {
    var d = el.dataset;
    return (state.verdict === 'all' || d.verdict === state.verdict) &&
      (state.profile === '' || d.profile === state.profile) &&
      (state.scenario === '' || d.scenario === state.scenario);
  }
  function apply() {
    var shown = 0;
    document.querySelectorAll('details.scenario').forEach(function (el) {
      var ok = matches(el);
      el.hidden = !ok;
      if (ok) shown++;
    });
    document.querySelectorAll('#matrix td.cell').forEach(function (el) { el.style.opacity = matches(el) ? '' : '0.25'; });
    document.querySelectorAll('#matrix [data-profile]').forEach(function (el) {
      if (el.tagName === 'TH' || el.classList.contains('empty') || el.classList.contains('cell')) el.hidden = state.profile !== '' && el.dataset.profile !== state.profile;
    });
    document.querySelectorAll('#matrix tbody tr').forEach(function (tr) {
      var any = false;
      tr.querySelectorAll('td.cell').forEach(function (td) { if (matches(td)) any = true; });
      tr.hidden = !any;
    });
    document.getElementById('none').hidden = shown > 0;
  }
  chips.forEach(function (chip) {
    chip.addEventListener('click', function () {
      state.verdict = chip.dataset.verdict;
      chips.forEach(function (c) { c.classList.toggle('on', c === chip); });
      apply();
    });
  });
  document.getElementById('f-profile').addEventListener('change', function (e) { state.profile = e.target.value; apply(); });
  document.getElementById('f-scenario').addEventListener('change', function (e) { state.scenario = e.target.value; apply(); });
  document.querySelectorAll('#matrix td.cell a').forEach(function (a) {
    a.addEventListener('click', function () {
      var target = document.getElementById(a.getAttribute('href').slice(1));
      if (target) target.open = true;
    });
  });
  if (window.location.hash) {
    var target = document.getElementById(window.location.hash.slice(1));
    if (target && target.tagName === 'DETAILS') target.open = true;
  }

  document.querySelectorAll('.chartbox').forEach(function (box) {
    var buttons = box.querySelectorAll('button.view');
    buttons.forEach(function (button) {
      button.addEventListener('click', function () {
        buttons.forEach(function (b) { b.classList.toggle('on', b === button); });
        box.querySelectorAll('.view-body').forEach(function (v) { v.hidden = v.dataset.view !== button.dataset.view; });
      });
    });
  });

  var tip = document.getElementById('tip');
  function show(text, ev) {
    tip.textContent = text;
    tip.hidden = false;
    var x = ev.clientX + 14;
    var y = ev.clientY + 14;
    var r = tip.getBoundingClientRect();
    if (x + r.width > window.innerWidth - 8) x = ev.clientX - r.width - 14;
    if (y + r.height > window.innerHeight - 8) y = ev.clientY - r.height - 14;
    tip.style.left = x + 'px';
    tip.style.top = y + 'px';
  }
  function hide() { tip.hidden = true; }
  function fmt(ms) { return (ms / 1000).toFixed(3) + ' s'; }

  document.querySelectorAll('.chart').forEach(function (box) {
    var svg = box.querySelector('svg');
    var cross = svg.querySelector('.cross');
    var data = JSON.parse(box.querySelector('.chart-data').textContent);
    function timeAt(ev) {
      var pt = svg.createSVGPoint();
      pt.x = ev.clientX;
      pt.y = ev.clientY;
      var p = pt.matrixTransform(svg.getScreenCTM().inverse());
      return { x: p.x, t: data.start + ((p.x - data.left) / data.width) * (data.end - data.start) };
    }
    svg.addEventListener('mousemove', function (ev) {
      var at = timeAt(ev);
      if (at.t < data.start || at.t > data.end) { cross.setAttribute('visibility', 'hidden'); hide(); return; }
      cross.setAttribute('x1', at.x);
      cross.setAttribute('x2', at.x);
      cross.setAttribute('visibility', 'visible');
      var own = ev.target.getAttribute && ev.target.getAttribute('data-tip');
      var b = Math.floor((at.t - data.start) / data.bucketMs);
      var lines = ['t = ' + fmt(at.t) + '   (bucket ' + fmt(data.start + b * data.bucketMs) + ' – ' + fmt(data.start + (b + 1) * data.bucketMs) + ')'];
      if (own) lines.unshift(own, '');
      data.rows.forEach(function (row) {
        var vals = row.series.map(function (s) { var v = s.values[b]; return s.name + ' ' + (v === null || v === undefined ? '—' : v); });
        lines.push(row.label + ': ' + vals.join(', '));
      });
      data.lanes.forEach(function (lane) {
        var seg = lane.segs.find(function (s) { return s[0] <= at.t && at.t < s[1]; });
        if (seg) lines.push(lane.name + ': ' + seg[2].replace(/ \(t=.*\)$/, ''));
      });
      show(lines.join('\n'), ev);
    });
    svg.addEventListener('mouseleave', function () { cross.setAttribute('visibility', 'hidden'); hide(); });
  });
})();
