// Frames in the layout of docs/recording.md (versions 1 and 2, little-endian), read from an
// ArrayBuffer: a live frame (/api/frame) and the pieces of a recording (/api/frames) have it.

const FRAME_PREFIX_BYTES = 48;
const HEADER_BYTES = 40;
const CONTACT_BYTES = 56;
const MAGIC = [0x49, 0x4d, 0x50, 0x52, 0x45, 0x43, 0x0d, 0x0a];  // IMPREC\r\n

// A buffer that is not a valid recording (docs/recording.md, "Validation"); the message names
// the file, the byte offset and the rule.
export class RecordingError extends Error {
  constructor(message) {
    super(message);
    this.name = 'RecordingError';
  }
}

// Rule 8: a JSON number with an integral value (JSON.parse gives 3.0 as 3; booleans are not numbers).
const whole = (v) => typeof v === 'number' && Number.isFinite(v) && Math.floor(v) === v;
const isObject = (v) => typeof v === 'object' && v !== null && !Array.isArray(v);

// Rule 8 on a parsed scene: the problem, or null. `sizes`: [{nb, nq, nv}] of the header.
export function sceneProblem(scene, sizes, sensorFloats) {
  if (!isObject(scene)) return 'the scene is not a JSON object';
  const systems = scene.systems;
  if (!Array.isArray(systems)) return 'the scene has no "systems" array';
  if (systems.length !== sizes.length) return `the scene has ${systems.length} systems, the header ${sizes.length}`;
  for (let i = 0; i < sizes.length; ++i) {
    const s = systems[i];
    const at = `scene system ${i}`;
    if (!isObject(s) || typeof s.name !== 'string') return `${at} is not an object with a "name"`;
    for (const key of ['nb', 'nq', 'nv']) {
      if (!whole(s[key]) || s[key] !== sizes[i][key]) return `${at}: "${key}" is not ${sizes[i][key]} as in the header`;
    }
    if (!Array.isArray(s.bodies) || s.bodies.length !== sizes[i].nb) return `${at}: "bodies" is not an array of ${sizes[i].nb}`;
    if (!s.bodies.every((b) => isObject(b) && typeof b.name === 'string')) return `${at}: a body is not an object with a "name"`;
    if (!Array.isArray(s.joints)) return `${at}: no "joints" array`;
    for (const j of s.joints) {
      if (!isObject(j) || typeof j.name !== 'string') return `${at}: a joint is not an object with a "name"`;
      const v = [j.idx_q, j.nq, j.idx_v, j.nv];
      if (!v.every((x) => whole(x) && x >= 0) || v[0] + v[1] > sizes[i].nq || v[2] + v[3] > sizes[i].nv) {
        return `${at}: joint '${j.name}' has coordinates outside the system's`;
      }
    }
  }
  if (!Object.prototype.hasOwnProperty.call(scene, 'sensors')) {
    return sensorFloats > 0 ? `the scene has no "sensors" for the header's ${sensorFloats} values` : null;
  }
  if (!Array.isArray(scene.sensors)) return 'the scene\'s "sensors" is not an array';
  let fields = 0;
  for (const c of scene.sensors) {
    if (!isObject(c) || typeof c.name !== 'string' || typeof c.type !== 'string') {
      return 'a scene sensor is not an object with a "name" and a "type"';
    }
    if (!Array.isArray(c.fields)) return `scene sensor '${c.name}' has no "fields" array`;
    if (!c.fields.every((x) => typeof x === 'string')) return `scene sensor '${c.name}' has a field that is not a string`;
    fields += c.fields.length;
  }
  if (fields !== sensorFloats) return `the scene's sensors have ${fields} fields, the header ${sensorFloats} values`;
  return null;
}

// A whole recording (the bytes of a .imprec file), checked against the rules of docs/recording.md
// ("Validation") in the order of the C++ reader (src/record/recording.cpp) and the Python one
// (python/impulse_viz/recording.py). Returns { version, dt, every, scene, sizes, sensorFloats,
// fixedBytes, offsets (byte offset of each frame), droppedBytes (rule 12), warning (or null) };
// throws RecordingError. Rule 1 (a regular file) is the server's: the page gets bytes.
export function parseRecording(buffer, name = 'recording') {
  const head = `recording '${name}': `;
  const fail = (problem, at, rule) => { throw new RecordingError(`${head}${problem} at byte ${at} (rule ${rule})`); };
  const n = buffer.byteLength;
  const dv = new DataView(buffer);
  const u32 = (at) => dv.getUint32(at, true);
  // rule 2
  if (n < 48) fail(`not an Impulse recording (bad magic: the file has ${n} bytes)`, 0, 2);
  if (!MAGIC.every((c, i) => dv.getUint8(i) === c)) fail('not an Impulse recording (bad magic)', 0, 2);
  const version = u32(8);
  if (version !== 1 && version !== 2) fail(`version ${version} is not supported (this build reads 1 and 2)`, 8, 3);  // rule 3
  const header = u32(12), nsys = u32(16), fixed = u32(20), contact = u32(24), every = u32(28);
  const dt = dv.getFloat64(32, true);
  if (contact !== CONTACT_BYTES) fail(`contact_bytes is ${contact}, not 56`, 24, 4);  // rule 4
  if (every < 1) fail('every is 0, not >= 1', 28, 5);  // rule 5
  if (!(Number.isFinite(dt) && dt > 0)) fail(`dt is ${dt}, not a finite number > 0`, 32, 5);
  // rule 6 (numbers below 2^53: exact in a double)
  if (header % 8 !== 0) fail(`header_bytes ${header} is not a multiple of 8`, 12, 6);
  if (header > n) fail(`header_bytes ${header} is beyond the end of the file (${n} bytes)`, 12, 6);
  const sizesEnd = HEADER_BYTES + 12 * nsys + (version >= 2 ? 8 : 4);
  if (sizesEnd > header) fail(`${nsys} systems do not fit in header_bytes ${header}`, 16, 6);
  const sceneLen = u32(sizesEnd - 4);
  if (sizesEnd + sceneLen > header) fail(`the scene's ${sceneLen} bytes do not fit in header_bytes ${header}`, sizesEnd - 4, 6);
  // rule 7
  const sizes = [];
  let expect = FRAME_PREFIX_BYTES;
  for (let i = 0; i < nsys; ++i) {
    const at = HEADER_BYTES + 12 * i;
    const z = { nb: u32(at), nq: u32(at + 4), nv: u32(at + 8) };
    if (z.nb > 100000 || z.nq > 1000000 || z.nv > 1000000) {
      fail(`system ${i} sizes (nb ${z.nb}, nq ${z.nq}, nv ${z.nv}) are out of bounds`, at, 7);
    }
    sizes.push(z);
    expect += 4 * (5 + 7 * z.nb + z.nq + 2 * z.nv);
  }
  const sensorFloats = version >= 2 ? u32(sizesEnd - 8) : 0;
  if (sensorFloats > 100000000) fail(`${sensorFloats} sensor values per frame are out of bounds`, sizesEnd - 8, 7);
  expect += 4 * sensorFloats;
  if (expect !== fixed) fail(`fixed_bytes is ${fixed}, the sizes give ${expect}`, 20, 7);
  // rule 8: strict UTF-8 (a byte order mark is kept, and JSON rejects it), then JSON (no NaN or Infinity)
  let scene;
  try {
    const text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(new Uint8Array(buffer, sizesEnd, sceneLen));
    scene = JSON.parse(text);
  } catch (e) {
    fail('the scene is not valid UTF-8 JSON', sizesEnd, 8);
  }
  const problem = sceneProblem(scene, sizes, sensorFloats);
  if (problem) fail(problem, sizesEnd, 8);
  // rules 9 and 12: the frame boundaries
  const offsets = [];
  let droppedBytes = 0;
  for (let at = header; at < n;) {
    if (n - at < 8) {  // rule 12: a partial last frame, too short for its size fields
      droppedBytes = n - at;
      break;
    }
    const size = u32(at), nc = u32(at + 4);
    if (size !== fixed + nc * contact) {  // rule 9
      fail(`frame ${offsets.length} has size ${size}, not fixed_bytes + 56 x ${nc} contacts = ${fixed + nc * contact}`, at, 9);
    }
    if (size > n - at) {  // rule 12: a partial last frame (the file of a run that was killed)
      droppedBytes = n - at;
      break;
    }
    offsets.push(at);
    at += size;
  }
  // rules 10 and 11, frame by frame
  offsets.forEach((at, k) => {
    const status = u32(at + 24);
    if (status > 4) fail(`frame ${k} has status ${status}, not 0..4`, at + 24, 10);
    const nc = u32(at + 4);
    for (let c = 0; c < nc; ++c) {
      const ca = at + fixed + 56 * c + 40;
      for (let side = 0; side < 2; ++side) {
        const system = dv.getInt32(ca + 8 * side, true), body = dv.getInt32(ca + 8 * side + 4, true);
        const ok = system === -1 ? body === -1 : system >= 0 && system < nsys && body >= 0 && body < sizes[system].nb;
        if (!ok) fail(`frame ${k} contact ${c} has system ${system} and body ${body}, not a body of the recording`, ca + 8 * side, 11);
      }
    }
  });
  const warning = droppedBytes
    ? `${head}the last frame is incomplete (a run that was killed?): its ${droppedBytes} bytes at byte ${n - droppedBytes} are dropped (rule 12)`
    : null;
  return { version, dt, every, scene, sizes, sensorFloats, fixedBytes: fixed, offsets, droppedBytes, warning };
}

// Sizes of each system from a scene.
export function sizesFromScene(scene) {
  return scene.systems.map((s) => ({ nb: s.nb, nq: s.nq, nv: s.nv }));
}

// One frame at byte `at`: copies of the numbers (small), contacts as a flat Float32Array view
// of 14 values each: position(3) normal(3) impulse(3) depth, then 4 ints (read with `contactInts`).
// Throws RecordingError when the frame's size (rule 9) does not match the sizes or the buffer.
export function decodeFrame(buffer, at, sizes, sensorFloats = 0) {
  const dv = new DataView(buffer);
  if (at < 0 || at + 8 > buffer.byteLength) throw new RecordingError(`frame at byte ${at}: beyond the ${buffer.byteLength} bytes received`);
  const fixed = FRAME_PREFIX_BYTES + sizes.reduce((a, z) => a + 4 * (5 + 7 * z.nb + z.nq + 2 * z.nv), 0) + 4 * sensorFloats;
  const declared = dv.getUint32(at, true);
  if (declared !== fixed + CONTACT_BYTES * dv.getUint32(at + 4, true) || at + declared > buffer.byteLength) {
    throw new RecordingError(`frame at byte ${at}: size ${declared} does not match the scene or the ${buffer.byteLength} bytes received (rule 9)`);
  }
  const f = {
    size: dv.getUint32(at, true),
    contactCount: dv.getUint32(at + 4, true),
    step: Number(dv.getBigUint64(at + 8, true)),
    time: dv.getFloat64(at + 16, true),
    status: dv.getUint32(at + 24, true),
    iterations: dv.getUint32(at + 28, true),
    residual: dv.getFloat32(at + 32, true),
    maxPenetration: dv.getFloat32(at + 36, true),
    limits: dv.getUint32(at + 40, true),
    stepUs: dv.getFloat32(at + 44, true),
    systems: [],
    contacts: [],
  };
  let p = at + FRAME_PREFIX_BYTES;
  const floats = (n) => {
    const a = new Float32Array(n);
    for (let i = 0; i < n; ++i) a[i] = dv.getFloat32(p + 4 * i, true);
    p += 4 * n;
    return a;
  };
  for (const z of sizes) {
    const head = floats(5);
    const s = { kinetic: head[0], potential: head[1], com: head.subarray(2, 5) };
    s.poses = floats(7 * z.nb);
    s.q = floats(z.nq);
    s.u = floats(z.nv);
    s.tau = floats(z.nv);
    f.systems.push(s);
  }
  f.sensors = floats(sensorFloats);
  for (let c = 0; c < f.contactCount; ++c) {
    const v = floats(10);
    f.contacts.push({
      position: v.subarray(0, 3),
      normal: v.subarray(3, 6),
      impulse: v.subarray(6, 9),
      depth: v[9],
      systemA: dv.getInt32(p, true),
      bodyA: dv.getInt32(p + 4, true),
      systemB: dv.getInt32(p + 8, true),
      bodyB: dv.getInt32(p + 12, true),
    });
    p += 16;
  }
  return f;
}

// Frames of a recording fetched from the server in pieces of `chunk` frames (/api/frames), kept
// in a cache of at most `maxChunks` pieces (least recently used goes first). Opening a recording
// then costs one piece and the plot series, not the whole file: 100k ANYmal steps are 75 MB.
export class FrameSource {
  constructor(numFrames, sizes, sensorFloats, { chunk = 256, maxChunks = 64 } = {}) {
    this.n = numFrames;
    this.sizes = sizes;
    this.sensorFloats = sensorFloats;
    this.chunk = chunk;
    this.maxChunks = maxChunks;
    this.chunks = new Map();   // piece index -> { buffer, offsets } (Map keeps insertion order: LRU)
    this.pending = new Map();  // piece index -> Promise
  }

  // The decoded frame k, or null when its piece is not loaded yet.
  get(k) {
    const c = Math.floor(k / this.chunk);
    const piece = this.chunks.get(c);
    if (!piece) return null;
    this.chunks.delete(c);  // most recently used: to the end
    this.chunks.set(c, piece);
    return decodeFrame(piece.buffer, piece.offsets[k - c * this.chunk], this.sizes, this.sensorFloats);
  }

  // Resolves when the piece holding frame k is loaded.
  load(k) {
    const c = Math.floor(k / this.chunk);
    if (this.chunks.has(c)) return Promise.resolve();
    if (!this.pending.has(c)) {
      const from = c * this.chunk;
      const count = Math.min(this.chunk, this.n - from);
      const p = fetch(`/api/frames?from=${from}&count=${count}`)
        .then((r) => {
          if (!r.ok) throw new Error(`/api/frames: HTTP ${r.status}`);
          return r.arrayBuffer();
        })
        .then((buffer) => {
          const dv = new DataView(buffer);
          const offsets = new Array(count);
          for (let i = 0, at = 0; i < count; ++i) {
            offsets[i] = at;
            at += dv.getUint32(at, true);
          }
          this.chunks.set(c, { buffer, offsets });
          while (this.chunks.size > this.maxChunks) this.chunks.delete(this.chunks.keys().next().value);
        })
        .finally(() => this.pending.delete(c));
      this.pending.set(c, p);
    }
    return this.pending.get(c);
  }
}

// The plot series of /api/series: u32 n, u32 0, time (n float64), then n float32 each of kinetic,
// potential, contacts, normal force, iterations, residual and penetration.
export function parseSeries(buffer) {
  const n = new DataView(buffer).getUint32(0, true);
  const time = new Float64Array(buffer, 8, n);
  const names = ['kinetic', 'potential', 'contacts', 'normalForce', 'iterations', 'residual', 'penetration'];
  const out = { n, time };
  names.forEach((name, i) => { out[name] = Float64Array.from(new Float32Array(buffer, 8 + 8 * n + 4 * n * i, n)); });
  out.energy = out.kinetic.map((v, i) => v + out.potential[i]);
  return out;
}

// One dof over every frame (/api/dof): q, u and tau.
export function parseDof(buffer, n) {
  return {
    q: Float64Array.from(new Float32Array(buffer, 0, n)),
    u: Float64Array.from(new Float32Array(buffer, 4 * n, n)),
    tau: Float64Array.from(new Float32Array(buffer, 8 * n, n)),
  };
}
