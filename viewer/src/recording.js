// The recording layout of docs/recording.md (versions 1 and 2, little-endian), read from an ArrayBuffer.
// A live frame from the server (/api/frame) has the same layout as one frame of a recording.

export const MAGIC = 'IMPREC\r\n';
export const VERSION = 2;  // 2 adds sensor readings after the systems; 1 is still read
const HEADER_BYTES = 40;
const FRAME_PREFIX_BYTES = 48;
export const CONTACT_BYTES = 56;

// Header of a recording: sizes, dt and the scene (parsed JSON).
export function parseHeader(buffer) {
  const dv = new DataView(buffer);
  const bytes = new Uint8Array(buffer);
  let magic = '';
  for (let i = 0; i < 8 && i < bytes.length; ++i) magic += String.fromCharCode(bytes[i]);
  if (magic !== MAGIC) throw new Error('not an Impulse recording (bad magic)');
  const version = dv.getUint32(8, true);
  if (version !== 1 && version !== VERSION) {
    throw new Error(`recording version ${version} is not supported (viewer: 1, ${VERSION})`);
  }
  const headerBytes = dv.getUint32(12, true);
  const nsys = dv.getUint32(16, true);
  const fixed = dv.getUint32(20, true);
  const every = dv.getUint32(28, true);
  const dt = dv.getFloat64(32, true);
  const sizes = [];
  for (let i = 0; i < nsys; ++i) {
    const o = HEADER_BYTES + 12 * i;
    sizes.push({ nb: dv.getUint32(o, true), nq: dv.getUint32(o + 4, true), nv: dv.getUint32(o + 8, true) });
  }
  // version 2: the sensor values per frame (u32) follow the system sizes
  const sceneAt = HEADER_BYTES + 12 * nsys + (version >= 2 ? 8 : 4);
  const sensorFloats = version >= 2 ? dv.getUint32(sceneAt - 8, true) : 0;
  const sceneLen = dv.getUint32(sceneAt - 4, true);
  const scene = JSON.parse(new TextDecoder().decode(bytes.subarray(sceneAt, sceneAt + sceneLen)));
  return { version, headerBytes, nsys, fixed, every, dt, sizes, sensorFloats, scene };
}

// Sizes of each system from a scene (live mode has no binary header).
export function sizesFromScene(scene) {
  return scene.systems.map((s) => ({ nb: s.nb, nq: s.nq, nv: s.nv }));
}

// Byte offset of every complete frame.
export function indexFrames(buffer, header) {
  const dv = new DataView(buffer);
  const offsets = [];
  let at = header.headerBytes;
  const n = buffer.byteLength;
  while (at + 8 <= n) {
    const size = dv.getUint32(at, true);
    if (size < FRAME_PREFIX_BYTES || at + size > n) break;
    offsets.push(at);
    at += size;
  }
  return Float64Array.from(offsets);
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

// The series the plots need, for every frame, in one pass over the file.
export function summarise(buffer, header, offsets) {
  const dv = new DataView(buffer);
  const n = offsets.length;
  const out = {
    time: new Float64Array(n),
    kinetic: new Float64Array(n),
    potential: new Float64Array(n),
    energy: new Float64Array(n),
    contacts: new Float64Array(n),
    normalForce: new Float64Array(n),
    iterations: new Float64Array(n),
    residual: new Float64Array(n),
    penetration: new Float64Array(n),
  };
  const sysOffsets = [];
  let o = FRAME_PREFIX_BYTES;
  for (const z of header.sizes) {
    sysOffsets.push(o);
    o += 4 * (5 + 7 * z.nb + z.nq + 2 * z.nv);
  }
  const dt = header.dt * header.every;
  for (let k = 0; k < n; ++k) {
    const at = offsets[k];
    const nc = dv.getUint32(at + 4, true);
    out.time[k] = dv.getFloat64(at + 16, true);
    out.iterations[k] = dv.getUint32(at + 28, true);
    out.residual[k] = dv.getFloat32(at + 32, true);
    out.penetration[k] = dv.getFloat32(at + 36, true);
    let ke = 0;
    let pe = 0;
    for (const so of sysOffsets) {
      ke += dv.getFloat32(at + so, true);
      pe += dv.getFloat32(at + so + 4, true);
    }
    out.kinetic[k] = ke;
    out.potential[k] = pe;
    out.energy[k] = ke + pe;
    out.contacts[k] = nc;
    let fn = 0;
    for (let c = 0; c < nc; ++c) {
      const cp = at + header.fixed + c * CONTACT_BYTES;
      fn += dv.getFloat32(cp + 12, true) * dv.getFloat32(cp + 24, true) +
        dv.getFloat32(cp + 16, true) * dv.getFloat32(cp + 28, true) +
        dv.getFloat32(cp + 20, true) * dv.getFloat32(cp + 32, true);
    }
    out.normalForce[k] = fn / header.dt;
  }
  void dt;
  return out;
}

// Position, velocity and effort of one dof of one system over all frames.
export function jointSeries(buffer, header, offsets, system, iq, iv) {
  const dv = new DataView(buffer);
  let o = FRAME_PREFIX_BYTES;
  for (let s = 0; s < system; ++s) {
    const z = header.sizes[s];
    o += 4 * (5 + 7 * z.nb + z.nq + 2 * z.nv);
  }
  const z = header.sizes[system];
  const qAt = o + 4 * (5 + 7 * z.nb);
  const uAt = qAt + 4 * z.nq;
  const tauAt = uAt + 4 * z.nv;
  const n = offsets.length;
  const q = new Float64Array(n);
  const u = new Float64Array(n);
  const tau = new Float64Array(n);
  for (let k = 0; k < n; ++k) {
    const at = offsets[k];
    q[k] = dv.getFloat32(at + qAt + 4 * iq, true);
    u[k] = dv.getFloat32(at + uAt + 4 * iv, true);
    tau[k] = dv.getFloat32(at + tauAt + 4 * iv, true);
  }
  return { q, u, tau };
}
