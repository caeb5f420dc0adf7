// Browser test of `impulse view` (registered in ctest as viewer_browser; docs/viewer.md):
//   live: start `impulse view WORLD --port 0`, open it in headless Chromium (puppeteer-core),
//         wait for the scene, screenshot, assert robot-coloured pixels in the middle of the frame,
//         no JavaScript error, and that the simulation time shown by the page advances;
//   replay: record a run with `impulse run --record`, open it, and check that the page's
//         decoding of frames equals the server's (C++ RecordingReader) for the same frames.
// Exit 77 (ctest: skipped) with a message when Chromium or puppeteer-core is missing.
//
// usage: node browser_test.mjs IMPULSE_BINARY SOURCE_DIR WORK_DIR [--measure]
//   --measure also runs the targets of docs/viewer.md (100 ANYmals live, stream rate, opening a
//   100k-step recording) and writes screenshots to WORK_DIR.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { createRequire } from 'node:module';

const [impulse, source, work] = process.argv.slice(2, 5);
const measure = process.argv.includes('--measure');
const SKIP = 77;

const chromium = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'].find((p) => fs.existsSync(p));
if (!chromium) {
  console.log('SKIP: no Chromium (install the Debian package chromium: scripts/install-deps.sh)');
  process.exit(SKIP);
}
let puppeteer;
try {
  const require = createRequire(path.join(source, 'viewer', 'package.json'));
  puppeteer = require('puppeteer-core');
} catch (e) {
  console.log('SKIP: puppeteer-core not installed (cd viewer && npm ci)');
  process.exit(SKIP);
}
fs.mkdirSync(work, { recursive: true });

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
function check(cond, msg) {
  if (!cond) {
    console.error(`FAIL: ${msg}`);
    process.exitCode = 1;
    throw new Error(msg);
  }
  console.log(`ok: ${msg}`);
}

// `impulse view ARGS --port 0`; resolves with {url, proc} once it prints its URL
function startView(args) {
  return new Promise((resolve, reject) => {
    const proc = spawn(impulse, ['view', ...args, '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    const timer = setTimeout(() => reject(new Error(`impulse view did not print its URL: ${err}`)), 60000);
    proc.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/http:\/\/127\.0\.0\.1:\d+\//);
      if (m) { clearTimeout(timer); resolve({ url: m[0], proc }); }
    });
    proc.stderr.on('data', (d) => { err += d; });
    proc.on('exit', (code) => { clearTimeout(timer); reject(new Error(`impulse view exited (${code}): ${err}`)); });
  });
}

// Minimal PNG decoder (8-bit RGB/RGBA, non-interlaced: what Chromium writes) -> {w, h, px(RGBA)}
function decodePng(buf) {
  let at = 8;
  let w = 0; let h = 0; let type = 0;
  const idat = [];
  while (at < buf.length) {
    const len = buf.readUInt32BE(at);
    const kind = buf.toString('ascii', at + 4, at + 8);
    const data = buf.subarray(at + 8, at + 8 + len);
    if (kind === 'IHDR') { w = data.readUInt32BE(0); h = data.readUInt32BE(4); type = data[9]; }
    if (kind === 'IDAT') idat.push(data);
    at += 12 + len;
  }
  const bpp = type === 6 ? 4 : 3;
  const raw = zlib.inflateSync(Buffer.concat(idat));
  const stride = w * bpp;
  const out = Buffer.alloc(w * h * bpp);
  for (let y = 0; y < h; ++y) {
    const f = raw[y * (stride + 1)];
    const row = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    for (let x = 0; x < stride; ++x) {
      const a = x >= bpp ? out[y * stride + x - bpp] : 0;
      const b = y > 0 ? out[(y - 1) * stride + x] : 0;
      const c = x >= bpp && y > 0 ? out[(y - 1) * stride + x - bpp] : 0;
      let v = row[x];
      if (f === 1) v += a;
      else if (f === 2) v += b;
      else if (f === 3) v += (a + b) >> 1;
      else if (f === 4) { const p = a + b - c; const pa = Math.abs(p - a); const pb = Math.abs(p - b); const pc = Math.abs(p - c); v += pa <= pb && pa <= pc ? a : pb <= pc ? b : c; }
      out[y * stride + x] = v & 255;
    }
  }
  return { w, h, bpp, px: out };
}

// Fraction of pixels in the middle third of an image that have the robot's orange (#e8a33d, shaded)
function robotPixels(png) {
  const { w, h, bpp, px } = decodePng(png);
  let n = 0; let hits = 0;
  for (let y = Math.floor(h / 3); y < (2 * h) / 3; ++y) {
    for (let x = Math.floor(w / 3); x < (2 * w) / 3; ++x) {
      const i = (y * w + x) * bpp;
      const r = px[i]; const g = px[i + 1]; const b = px[i + 2];
      ++n;
      if (r > 90 && r - b > 60 && g - b > 20 && r - g > 25) ++hits;
    }
  }
  return hits / n;
}

async function openPage(browser, url) {
  const page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 720 });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e.message || e)));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  await page.goto(url, { waitUntil: 'load' });
  await page.waitForFunction(() => window.__impulse && (window.__impulse.ready || window.__impulse.errors.length > 0), { timeout: 60000 });
  return { page, errors };
}

const browser = await puppeteer.launch({
  executablePath: chromium,
  headless: 'new',
  args: ['--no-sandbox', '--use-angle=swiftshader', '--enable-unsafe-swiftshader', '--window-size=1280,720', '--mute-audio'],
});
const procs = [];
try {
  // ---------------------------------------------------------------- live
  const world = path.join(source, 'models', 'worlds', 'anymal_stand.xml');
  const live = await startView([world]);
  procs.push(live.proc);
  const { page, errors } = await openPage(browser, live.url);
  await sleep(1500);
  // the time shown advances by 0.1 s of simulation (within 60 s: a sanitizer build simulates and
  // serves at a few percent of real time while Chromium renders on the same cores)
  const t1 = await page.evaluate(() => window.__impulse.time);
  let t2 = t1;
  for (let i = 0; i < 120 && t2 <= t1 + 0.1; ++i) {
    await sleep(500);
    t2 = await page.evaluate(() => window.__impulse.time);
  }
  check(t2 > t1 + 0.1, `live mode: the simulation time advances (${t1.toFixed(3)} s -> ${t2.toFixed(3)} s)`);
  const view = await page.$('#view');
  const shot = await view.screenshot({ type: 'png' });
  fs.writeFileSync(path.join(work, 'viewer_live.png'), shot);
  const frac = robotPixels(shot);
  check(frac > 0.01, `live mode: robot pixels in the middle of the frame (${(100 * frac).toFixed(1)} % of it)`);
  // pause / step / reset through the page's buttons, checked on the server (the page's frame
  // rate under software rendering does not matter here), then on the page
  const status = async () => (await fetch(`${live.url}api/status`)).json();
  const until = async (what, pred) => {
    for (let i = 0; i < 100; ++i) {
      const s = await status();
      if (pred(s)) return s;
      await sleep(100);
    }
    throw new Error(`timed out waiting for ${what}`);
  };
  await page.click('#pause');
  const s1 = await until('pause', (s) => s.paused);
  await sleep(500);
  const s2 = await status();
  check(s2.paused && s2.time === s1.time, `live mode: pause stops the time (${s1.time} -> ${s2.time})`);
  await page.click('#step');
  const s3 = await until('step', (s) => s.steps > s2.steps);
  check(s3.steps === s2.steps + 1 && Math.abs(s3.time - s2.time - 0.001) < 1e-9, `live mode: Step advances one dt (${s2.time} -> ${s3.time})`);
  await page.waitForFunction((t) => Math.abs(window.__impulse.time - t) < 1e-9, { timeout: 20000 }, s3.time);
  check(true, 'live mode: the page shows the stepped state');
  await page.click('#reset');
  const s4 = await until('reset', (s) => s.steps === 0);
  check(s4.time === 0, 'live mode: Reset returns to t = 0');
  await page.waitForFunction(() => window.__impulse.time === 0, { timeout: 20000 });
  const pageErrors = await page.evaluate(() => window.__impulse.errors);
  check(errors.length === 0 && pageErrors.length === 0, `live mode: no JavaScript error ${JSON.stringify(errors.concat(pageErrors))}`);
  if (measure) {
    await page.click('#pause');
    await sleep(3000);
    fs.writeFileSync(path.join(work, 'viewer_live_page.png'), await page.screenshot({ type: 'png' }));
    const bps = await page.evaluate(() => window.__impulse.bytesPerSecond);
    const fps = await page.evaluate(() => window.__impulse.fps);
    const ms = await page.evaluate(() => [window.__impulse.applyMs, window.__impulse.renderMs]);
    console.log(`measure: one ANYmal live: ${fps.toFixed(1)} fps, stream ${(bps / 1e3).toFixed(1)} kB/s, ` +
      `decode + pose update ${ms[0].toFixed(2)} ms, render call ${ms[1].toFixed(1)} ms per frame`);
  }
  await page.close();
  live.proc.kill('SIGTERM');

  // ---------------------------------------------------------------- replay
  const rec = path.join(work, 'anymal_stand.imprec');
  const run = spawnSync(impulse, ['run', world, '--steps', '300', '--record', rec], { encoding: 'utf8' });
  check(run.status === 0, 'impulse run --record writes a recording');
  const rv = await startView([rec]);
  procs.push(rv.proc);
  const r = await openPage(browser, rv.url);
  const n = await r.page.evaluate(() => window.__impulse.numFrames);
  check(n === 300, `replay: the page reads 300 frames (${n})`);
  let maxDiff = 0;
  for (const k of [0, 150, 299]) {
    const mine = await r.page.evaluate(async (k) => {
      const f = await window.__impulse.decodeFrame(k);
      return { time: f.time, poses: f.systems.map((s) => Array.from(s.poses)), contacts: f.contacts.length };
    }, k);
    const server = await (await fetch(`${rv.url}api/frame.json?k=${k}`)).json();
    check(Math.abs(mine.time - server.time) < 1e-12 && mine.contacts === server.contacts.length, `replay: frame ${k} time and contacts agree`);
    server.systems.forEach((s, si) => s.poses.forEach((p, b) => p.forEach((v, i) => {
      maxDiff = Math.max(maxDiff, Math.abs(v - mine.poses[si][7 * b + i]));
    })));
  }
  // the server returns positions as stored and orientations through a rotation matrix (SE3):
  // equal to binary32 rounding
  check(maxDiff < 1e-6, `replay: page and server decode the same poses (max difference ${maxDiff.toExponential(2)})`);
  await sleep(800);
  const shot2 = await (await r.page.$('#view')).screenshot({ type: 'png' });
  fs.writeFileSync(path.join(work, 'viewer_replay.png'), shot2);
  check(robotPixels(shot2) > 0.01, 'replay: robot pixels in the middle of the frame');
  const full = await r.page.screenshot({ type: 'png' });
  fs.writeFileSync(path.join(work, 'viewer_page.png'), full);
  const rErrors = await r.page.evaluate(() => window.__impulse.errors);
  check(r.errors.length === 0 && rErrors.length === 0, `replay: no JavaScript error ${JSON.stringify(r.errors.concat(rErrors))}`);
  await r.page.close();
  rv.proc.kill('SIGTERM');

  // --mp4: a short recording to a small video (when ffmpeg is installed)
  if (fs.existsSync('/usr/bin/ffmpeg')) {
    const mp4 = path.join(work, 'anymal_stand.mp4');
    fs.rmSync(mp4, { force: true });
    const v = spawnSync(impulse, ['view', rec, '--mp4', mp4, '--port', '0', '--width', '320', '--height', '180', '--chromium', chromium],
      { encoding: 'utf8', timeout: 240000 });
    // frames at t = 0.001 + i / 30 s up to 0.3 s: 9
    check(v.status === 0 && fs.existsSync(mp4) && fs.statSync(mp4).size > 1000 && /: 9 frames at 30 fps/.test(v.stdout),
      `--mp4 renders the 0.3 s recording to 9 video frames (${(v.stdout + v.stderr).trim().split('\n').pop()})`);
  } else {
    console.log('skip: --mp4 (no ffmpeg)');
  }

  if (measure) await measureTargets();
} catch (e) {
  if (!process.exitCode) {
    console.error(`FAIL: ${e.message}`);
    process.exitCode = 1;
  }
} finally {
  for (const p of procs) p.kill('SIGTERM');
  await browser.close();
}

// The targets of docs/viewer.md.
async function measureTargets() {
  // 100 ANYmals live (a 10 x 10 grid, 2 m apart)
  const xml = [`<world dt="0.001"><solver name="bisection"/><contact max_contacts="1024"/><ground/>`];
  for (let i = 0; i < 100; ++i) {
    xml.push(`<robot name="a${i}" urdf="${path.join(source, 'models/anymal/anymal.urdf')}" pos="${2 * (i % 10) - 9} ${2 * Math.floor(i / 10) - 9} 0.549">` +
      `<q>0 0.4 -0.8 0 0.4 -0.8 0 -0.4 0.8 0 -0.4 0.8</q><pd kp="300" kd="8"/>` +
      `<pd_target LF_HFE="0.4" LF_KFE="-0.8" RF_HFE="0.4" RF_KFE="-0.8" LH_HFE="-0.4" LH_KFE="0.8" RH_HFE="-0.4" RH_KFE="0.8"/></robot>`);
  }
  xml.push('</world>');
  const file = path.join(work, 'anymal_100.xml');
  fs.writeFileSync(file, xml.join('\n'));
  const v = await startView([file]);
  const { page } = await openPage(browser, v.url);
  await page.evaluate(() => document.getElementById('frameall').click());
  // 8 s to settle (the page adapts its resolution once a second), then frames counted over 10 s
  await sleep(8000);
  const count = () => page.evaluate(() => [window.__impulse.frames, performance.now()]);
  const [f0, t0] = await count();
  await sleep(10000);
  const [f1, t1] = await count();
  const m = await page.evaluate(() => ({ bps: window.__impulse.bytesPerSecond, applyMs: window.__impulse.applyMs,
    renderMs: window.__impulse.renderMs, resolution: window.__impulse.resolution ?? 1 }));
  const fps = (1000 * (f1 - f0)) / (t1 - t0);
  const status = await (await fetch(`${v.url}api/status`)).json();
  console.log(`measure: 100 ANYmals live: ${fps.toFixed(1)} fps over 10 s in headless Chromium (SwiftShader) at ` +
    `${Math.round(100 * m.resolution)} % resolution, stream ${(m.bps / 1e6).toFixed(2)} MB/s, simulation at ` +
    `${status.real_time_factor.toFixed(2)}x real time; per frame: decode + pose update ${m.applyMs.toFixed(2)} ms, ` +
    `render call ${m.renderMs.toFixed(1)} ms`);
  fs.writeFileSync(path.join(work, 'viewer_100.png'), await (await page.$('#view')).screenshot({ type: 'png' }));
  await page.close();
  v.proc.kill('SIGTERM');

  // opening a 100k-step recording (trot, every step)
  const big = path.join(work, 'trot_100k.imprec');
  if (!fs.existsSync(big)) spawnSync(impulse, ['demo', 'trot', '--steps', '100000', '--record', big], { stdio: 'ignore' });
  const started = performance.now();
  const bv = await startView([big]);
  const serverMs = performance.now() - started;
  const b = await openPage(browser, bv.url);
  const totalMs = performance.now() - started;
  const [openMs, parts] = await b.page.evaluate(() => [window.__impulse.openMs, window.__impulse.openParts]);
  console.log(`measure: page opens a 100k-step recording (${(fs.statSync(big).size / 1e6).toFixed(1)} MB) in ${openMs.toFixed(0)} ms ` +
    `(first frame drawn after ${parts.firstFrameMs.toFixed(0)} ms, then the plot series); from starting impulse view ` +
    `to the page ready: ${totalMs.toFixed(0)} ms (server up after ${serverMs.toFixed(0)} ms, then a new browser tab)`);
  await sleep(500);
  fs.writeFileSync(path.join(work, 'viewer_trot.png'), await b.page.screenshot({ type: 'png' }));
  await b.page.close();
  bv.proc.kill('SIGTERM');
}
