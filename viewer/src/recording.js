// Frames in the layout of docs/recording.md (versions 1 and 2, little-endian), read from an
// ArrayBuffer: a live frame (/api/frame) and the pieces of a recording (/api/frames) have it.

const FRAME_PREFIX_BYTES = 48;

// Sizes of each system from a scene.
export function sizesFromScene(scene) {
  return scene.systems.map((s) => ({ nb: s.nb, nq: s.nq, nv: s.nv }));
}

// One frame at byte `at`: copies of the numbers (small), contacts as a flat Float32Array view
// of 14 values each: position(3) normal(3) impulse(3) depth, then 4 ints (read with `contactInts`).
export function decodeFrame(buffer, at, sizes, sensorFloats = 0) {
  const dv = new DataView(buffer);
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
