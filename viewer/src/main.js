// The page of `impulse view` (docs/viewer.md). Live mode polls the server for the latest frame
// and sends controls and pushes; replay mode fetches the plot series and, piece by piece, the
// frames it shows, and plays them back;
// render mode (?render=1, used by --mp4) draws each video frame and posts it to the server.
import { SceneView } from './scene.js';
import { Plots } from './plots.js';
import { decodeFrame, sizesFromScene, FrameSource, parseSeries, parseDof } from './recording.js';

const params = new URLSearchParams(location.search);
const renderMode = params.get('render') === '1';
const $ = (id) => document.getElementById(id);

// Test and measurement hooks (tests/viewer/browser_test.mjs reads them).
const state = (window.__impulse = {
  ready: false, mode: null, time: 0, frameIndex: 0, fps: 0, frames: 0, errors: [],
  bytesReceived: 0, bytesPerSecond: 0, openMs: 0, resolution: 1,
});
window.addEventListener('error', (e) => state.errors.push(String(e.message)));
window.addEventListener('unhandledrejection', (e) => state.errors.push(String(e.reason)));

// Every POST carries this header: the server refuses a POST without it, and a page from another
// origin cannot send it (docs/viewer.md, "Limits and security").
const postInit = (body) => ({ method: 'POST', headers: { 'X-Impulse-Request': '1' }, body });

function fail(msg) {
  state.errors.push(msg);
  const el = $('error');
  el.textContent = msg;
  el.style.display = 'block';
  if (renderMode) fetch('/api/render/error', postInit(msg));
}

async function getJson(url, init) {
  const r = await fetch(url, init);
  const j = await r.json();
  if (!r.ok) throw new Error(j.error || `${url}: HTTP ${r.status}`);
  return j;
}

// ---------------------------------------------------------------------------- plots
function plotSpecs() {
  return [
    { id: 'energy', title: 'Energy (J; potential from its first value)', series: [{ label: 'kinetic' }, { label: 'potential' }, { label: 'total' }] },
    { id: 'contacts', title: 'Contacts', series: [{ label: 'count', scale: 'n' }, { label: 'normal force (N)', scale: 'f' }] },
    { id: 'solver', title: 'Solver', series: [{ label: 'iterations', scale: 'it' }, { label: 'residual', scale: 'log' }] },
    { id: 'joint', title: 'Joint', series: [{ label: 'position', scale: 'q' }, { label: 'velocity', scale: 'u' }, { label: 'effort', scale: 'tau' }] },
  ];
}

// The dofs one can plot: every joint with one dof, and the base's x y z.
function jointChoices(scene) {
  const out = [];
  scene.systems.forEach((s, si) => {
    for (const j of s.joints) {
      if (j.nv === 1) out.push({ label: `${s.name}/${j.name}`, system: si, iq: j.idx_q, iv: j.idx_v });
      else if (j.nv === 6 && j.nq === 7) {
        ['x', 'y', 'z'].forEach((c, k) => out.push({ label: `${s.name}/base ${c}`, system: si, iq: j.idx_q + k, iv: j.idx_v + k }));
      }
    }
  });
  return out;
}

function positive(a) {
  const out = new Array(a.length);
  for (let i = 0; i < a.length; ++i) out[i] = a[i] > 0 ? a[i] : null;
  return out;
}

// ---------------------------------------------------------------------------- common UI
function setupCommon(view, scene) {
  $('frames').onchange = (e) => view.setFramesVisible(e.target.checked);
  $('com').onchange = (e) => view.setComVisible(e.target.checked);
  $('contacts').onchange = (e) => { view.showContacts = e.target.checked; };
  $('follow').onchange = (e) => { view.follow = e.target.checked; };
  $('forcescale').oninput = (e) => { view.forceScale = Number(e.target.value) / 1000; };
  $('frameall').onclick = () => view.frameAll();
  const sel = $('joint');
  const choices = jointChoices(scene);
  choices.forEach((c, i) => {
    const o = document.createElement('option');
    o.value = i;
    o.textContent = c.label;
    sel.appendChild(o);
  });
  const firstJoint = choices.findIndex((c) => !c.label.includes('base '));
  if (firstJoint >= 0) sel.value = firstJoint;
  return choices;
}

// Text that changes every frame is written at most 10 times a second: each write lays out and
// repaints the page, which under software compositing costs as much as drawing the scene.
function throttledText(id) {
  const el = $(id);
  let last = -1e9;
  let text = '';
  return (now, make) => {
    if (now - last < 100) return;
    last = now;
    const t = make();
    if (t !== text) el.textContent = text = t;
  };
}

function fpsCounter() {
  let n = 0;
  let t0 = performance.now();
  return () => {
    ++n;
    ++state.frames;
    const t = performance.now();
    if (t - t0 >= 1000) {
      state.fps = (1000 * n) / (t - t0);
      const res = state.resolution < 0.999 ? ` · ${Math.round(100 * state.resolution)} % resolution` : '';
      $('fps').textContent = `${state.fps.toFixed(0)} fps${res}`;
      n = 0;
      t0 = t;
    }
  };
}

// ---------------------------------------------------------------------------- replay
async function fetchBuffer(url) {
  const r = await fetch(url);
  if (!r.ok) throw new Error(`${url}: HTTP ${r.status}`);
  return r.arrayBuffer();
}

async function replay(info) {
  // Opening costs the scene, the first piece of frames and the plot series, all requested at
  // once. The scene is drawn as soon as its first frame is here (creating the view and the first
  // draw, which compiles the shaders, overlap the transfer of the series); the timeline and the
  // plots follow with the series.
  const t0 = performance.now();
  state.marks = { replay: t0 };
  const n = info.frames;
  const sceneP = getJson('/api/scene');
  const seriesP = fetchBuffer('/api/series');
  const scene = await sceneP;
  const frames = new FrameSource(n, sizesFromScene(scene), info.sensor_floats || 0);
  await frames.load(0);
  const view = new SceneView($('view'), scene, { preserveDrawingBuffer: renderMode, fullQuality: renderMode });
  state.view = view;  // for measurements from the browser test
  let k = 0;
  view.apply(frames.get(0));
  view.frameAll();
  view.draw(performance.now());
  state.marks.drawn = performance.now();
  const series = parseSeries(await seriesP);
  state.openParts = { firstFrameMs: state.marks.drawn - t0 };
  state.numFrames = n;
  state.decodeFrame = async (k) => { await frames.load(k); return frames.get(k); };
  const tStart = series.time[0];
  const tEnd = series.time[n - 1];
  let t = tStart;
  // Shows frame i; a frame whose piece is still on its way is drawn when it arrives (unless
  // another frame was asked for meanwhile). Playback asks for the next piece ahead of time.
  const setFrame = (i) => {
    k = Math.max(0, Math.min(n - 1, i));
    t = series.time[k];
    state.frameIndex = k;
    state.time = t;
    const want = k;
    const f = frames.get(want);
    if (f) {
      view.apply(f);
      if (want + frames.chunk < n) frames.load(want + frames.chunk);
      return Promise.resolve();
    }
    return frames.load(want).then(() => { if (k === want) view.apply(frames.get(want)); });
  };
  // index of the last frame at or before time x
  const frameAt = (x) => {
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (series.time[mid] <= x) lo = mid; else hi = mid - 1;
    }
    return lo;
  };

  if (renderMode) return renderVideo(view, series, setFrame, frameAt, tStart, tEnd);

  const choices = setupCommon(view, scene);
  $('live-controls').style.display = 'none';
  const slider = $('timeline');
  slider.max = n - 1;
  let playing = true;
  const playBtn = $('play');
  const setPlaying = (p) => { playing = p; playBtn.textContent = p ? 'Pause' : 'Play'; };
  playBtn.onclick = () => { if (!playing && k >= n - 1) t = tStart; setPlaying(!playing); };
  slider.oninput = () => { setPlaying(false); setFrame(Number(slider.value)); };
  const plots = new Plots($('plots'), plotSpecs(), () => t, (x) => { setPlaying(false); setFrame(frameAt(x)); });
  const v0 = series.potential[0];
  plots.setData('energy', [series.time, series.kinetic, series.potential.map((v) => v - v0), series.energy.map((v) => v - v0)]);
  plots.setData('contacts', [series.time, series.contacts, series.normalForce]);
  plots.setData('solver', [series.time, series.iterations, positive(series.residual)]);
  const showJoint = async () => {
    const c = choices[Number($('joint').value)];
    if (!c) return;
    const j = parseDof(await fetchBuffer(`/api/dof?system=${c.system}&iq=${c.iq}&iv=${c.iv}`), n);
    plots.setData('joint', [series.time, j.q, j.u, j.tau]);
    plots.setTitle('joint', `Joint ${c.label}`);
  };
  $('joint').onchange = showJoint;
  showJoint();
  window.addEventListener('keydown', (e) => {
    if (e.target.tagName === 'INPUT' || e.target.tagName === 'SELECT') return;
    if (e.key === ' ') { setPlaying(!playing); e.preventDefault(); }
    if (e.key === 'ArrowRight') { setPlaying(false); setFrame(k + 1); }
    if (e.key === 'ArrowLeft') { setPlaying(false); setFrame(k - 1); }
  });

  const tick = fpsCounter();
  const timeText = throttledText('time');
  let last = performance.now();
  let lastPlot = 0;
  const loop = (now) => {
    const wall = (now - last) / 1000;
    last = now;
    if (playing) {
      t += wall * Number($('speed').value);
      if (t >= tEnd) { t = tEnd; setPlaying(false); }
      const i = frameAt(t);
      if (i !== k) setFrame(i);
      state.time = t;
    }
    slider.value = k;
    timeText(now, () => `t = ${t.toFixed(3)} s  frame ${k + 1}/${n}`);
    if (now - lastPlot > 80) { plots.redraw(); lastPlot = now; }
    view.draw(now);
    state.resolution = view.resolution;
    state.renderMs = view.renderMs;
    tick();
    requestAnimationFrame(loop);
  };
  state.marks.ready = performance.now();
  state.openMs = state.marks.ready - t0;  // frame drawn, plots and timeline set up
  $('mode').textContent = `replay: ${info.source} (${n} frames, ${(info.bytes / 1e6).toFixed(1)} MB, opened in ${state.openMs.toFixed(0)} ms)`;
  state.ready = true;
  requestAnimationFrame(loop);
}

// --mp4: frame i shows time tStart + i / fps; each canvas goes to the server as PNG.
async function renderVideo(view, series, setFrame, frameAt, tStart, tEnd) {
  document.body.classList.add('render');
  view.setFixedSize(Number(params.get('width') || 1280), Number(params.get('height') || 720));
  const fps = Number(params.get('fps') || 30);
  const count = Math.max(1, Math.floor((tEnd - tStart) * fps) + 1);
  state.ready = true;
  for (let i = 0; i < count; ++i) {
    await setFrame(frameAt(tStart + i / fps));
    view.render();
    const blob = await new Promise((res) => view.renderer.domElement.toBlob(res, 'image/png'));
    const r = await fetch('/api/render/frame', postInit(blob));
    if (!r.ok) throw new Error('the server refused a frame');
  }
  await fetch('/api/render/done', postInit(String(count)));
}

// ---------------------------------------------------------------------------- live
async function live(info) {
  const scene = await getJson('/api/scene');
  const sizes = sizesFromScene(scene);
  const view = new SceneView($('view'), scene);
  state.view = view;  // for measurements from the browser test
  const choices = setupCommon(view, scene);
  $('replay-controls').style.display = 'none';
  $('timeline').style.visibility = 'hidden';  // live: the time is shown as text, the plots scroll
  $('mode').textContent = `live: ${info.source}`;
  let frame = decodeFrame(await (await fetch('/api/frame')).arrayBuffer(), 0, sizes);
  view.apply(frame);
  view.frameAll();

  // rolling history (the last 20 s of polled frames) for the plots
  const H = { t: [], ke: [], pe: [], e: [], nc: [], fn: [], it: [], res: [], q: [], u: [], tau: [] };
  const push = (f) => {
    if (H.t.length && f.time <= H.t[H.t.length - 1]) {
      if (f.time < H.t[H.t.length - 1]) for (const key in H) if (Array.isArray(H[key])) H[key].length = 0;  // reset
      else return;
    }
    let ke = 0;
    let pe = 0;
    for (const s of f.systems) { ke += s.kinetic; pe += s.potential; }
    let fn = 0;
    for (const c of f.contacts) fn += c.impulse[0] * c.normal[0] + c.impulse[1] * c.normal[1] + c.impulse[2] * c.normal[2];
    if (H.v0 === undefined || !H.t.length) H.v0 = pe;
    H.t.push(f.time); H.ke.push(ke); H.pe.push(pe - H.v0); H.e.push(ke + pe - H.v0);
    H.nc.push(f.contacts.length); H.fn.push(fn / (scene.dt || 0.001));
    H.it.push(f.iterations); H.res.push(f.residual > 0 ? f.residual : null);
    const c = choices[Number($('joint').value)];
    const s = c && f.systems[c.system];
    H.q.push(s ? s.q[c.iq] : null); H.u.push(s ? s.u[c.iv] : null); H.tau.push(s ? s.tau[c.iv] : null);
    while (H.t.length > 1 && H.t[H.t.length - 1] - H.t[0] > 20) for (const key in H) if (Array.isArray(H[key])) H[key].shift();
  };
  push(frame);
  const plots = new Plots($('plots'), plotSpecs(), () => frame.time, null);
  $('joint').onchange = () => { H.q.fill(null); H.u.fill(null); H.tau.fill(null); };

  let status = {};
  const control = async (cmd, extra = '') => {
    try {
      status = await getJson(`/api/control?cmd=${cmd}${extra}`, postInit());
      $('pause').textContent = status.paused ? 'Run' : 'Pause';
    } catch (e) { fail(String(e.message)); }
  };
  $('pause').onclick = () => control(status.paused ? 'run' : 'pause');
  $('step').onclick = () => control('step');
  $('reset').onclick = () => control('reset');
  $('speed').onchange = () => control('', `&speed=${$('speed').value}`);
  $('speed').value = String(info.speed || 1);
  window.addEventListener('keydown', (e) => {
    if (e.target.tagName === 'INPUT' || e.target.tagName === 'SELECT') return;
    if (e.key === ' ') { $('pause').click(); e.preventDefault(); }
    if (e.key === 's') $('step').click();
    if (e.key === 'r') $('reset').click();
  });
  const pollStatus = async () => {
    try {
      status = await getJson('/api/status');
      $('pause').textContent = status.paused ? 'Run' : 'Pause';
      $('rtf').textContent = status.paused ? 'paused' : `${status.real_time_factor.toFixed(2)}x real time`;
      if (status.error) fail(status.error);
    } catch (e) { /* server gone */ }
    setTimeout(pollStatus, 500);
  };
  pollStatus();

  // Shift + drag on a body pushes it: a spring force from the grabbed point to the mouse.
  let grab = null;
  const canvas = view.renderer.domElement;
  const line = document.createElement('div');
  canvas.addEventListener('pointerdown', (e) => {
    if (!e.shiftKey) return;
    const hit = view.pick(e.clientX, e.clientY);
    if (!hit) return;
    grab = { ...hit, target: hit.point.clone(), last: 0 };
    view.controls.enabled = false;
    canvas.setPointerCapture(e.pointerId);
  });
  canvas.addEventListener('pointermove', (e) => {
    if (!grab) return;
    const p = view.bodyPoint(grab.system, grab.body, grab.local);
    grab.target = view.dragPoint(e.clientX, e.clientY, p) || grab.target;
  });
  const release = () => { grab = null; view.controls.enabled = true; };
  canvas.addEventListener('pointerup', release);
  void line;
  const sendPush = () => {
    if (grab) {
      const p = view.bodyPoint(grab.system, grab.body, grab.local);
      const k = 20 * 9.81 * (scene.systems[grab.system].mass || 1);  // N per metre: 2 m g at 10 cm
      const f = grab.target.clone().sub(p).multiplyScalar(k);
      const q = `system=${grab.system}&body=${grab.body}&fx=${f.x}&fy=${f.y}&fz=${f.z}` +
        `&px=${grab.local.x}&py=${grab.local.y}&pz=${grab.local.z}&seconds=0.12`;
      fetch(`/api/push?${q}`, postInit());
    }
    setTimeout(sendPush, 50);
  };
  sendPush();

  // poll the latest frame once per drawn frame
  let inflight = false;
  let bytes = 0;
  let bytesT0 = performance.now();
  const poll = async () => {
    inflight = true;
    try {
      const buf = await (await fetch('/api/frame', { cache: 'no-store' })).arrayBuffer();
      bytes += buf.byteLength;
      state.bytesReceived += buf.byteLength;
      const a0 = performance.now();
      frame = decodeFrame(buf, 0, sizes);
      push(frame);
      view.apply(frame);
      state.applyMs = 0.9 * (state.applyMs || 0) + 0.1 * (performance.now() - a0);
    } catch (e) { /* server stopped */ }
    inflight = false;
  };
  const tick = fpsCounter();
  const timeText = throttledText('time');
  let lastPlot = 0;
  const loop = (now) => {
    if (!inflight) poll();
    state.time = frame.time;
    timeText(now, () => `t = ${frame.time.toFixed(3)} s  step ${frame.step}  contacts ${frame.contacts.length}`);
    if (now - lastPlot > 100) {
      plots.setData('energy', [H.t, H.ke, H.pe, H.e]);
      plots.setData('contacts', [H.t, H.nc, H.fn]);
      plots.setData('solver', [H.t, H.it, H.res]);
      plots.setData('joint', [H.t, H.q, H.u, H.tau]);
      const c = choices[Number($('joint').value)];
      if (c) plots.setTitle('joint', `Joint ${c.label}`);
      lastPlot = now;
    }
    if (now - bytesT0 > 1000) {
      state.bytesPerSecond = (1000 * bytes) / (now - bytesT0);
      bytes = 0;
      bytesT0 = now;
    }
    view.draw(now);
    state.resolution = view.resolution;
    state.renderMs = view.renderMs;
    tick();
    requestAnimationFrame(loop);
  };
  state.ready = true;
  requestAnimationFrame(loop);
}

async function main() {
  try {
    const info = await getJson('/api/info');
    state.mode = info.mode;
    if (info.mode === 'replay') await replay(info);
    else await live(info);
  } catch (e) {
    fail(`viewer: ${e.message || e}`);
  }
}

main();
