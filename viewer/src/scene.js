// The 3D scene of the viewer (three.js, z up): collision geometry of every body from the scene
// description (docs/recording.md "Scene"), ground with grid, body frames, centres of mass,
// contact points with force arrows, shadows, orbit controls and a follow camera.
import * as THREE from 'three';
import { OrbitControls } from 'three/examples/jsm/controls/OrbitControls.js';

const UP = new THREE.Vector3(0, 0, 1);
const Y_AXIS = new THREE.Vector3(0, 1, 0);
// Scratch objects of the per-frame updates (apply, updateRods, applyContacts, followTarget), which
// run one after the other: reused, so that showing a frame allocates nothing of its own.
const tmp = {
  m: new THREE.Matrix4(),
  a: new THREE.Vector3(),
  b: new THREE.Vector3(),
  d: new THREE.Vector3(),
  q: new THREE.Quaternion(),
  scale: new THREE.Vector3(),
};

// `coarse`: a quarter of the triangles on round shapes (software WebGL, where the vertex work of
// 400 feet spheres alone was 300k triangles per pass)
function shapeGeometry(s, coarse = false) {
  const [a, b, c] = s.size;
  const k = coarse ? 2 : 1;
  let g;
  switch (s.type) {
    case 'sphere':
      return new THREE.SphereGeometry(a, 24 / k, 16 / k);
    case 'box':
      return new THREE.BoxGeometry(a, b, c);
    case 'cylinder':
      g = new THREE.CylinderGeometry(a, a, b, 24 / k);
      g.rotateX(Math.PI / 2);  // three.js cylinders run along y, ours along z
      return g;
    case 'capsule':
      g = new THREE.CapsuleGeometry(a, b, 8 / k, 16 / k);
      g.rotateX(Math.PI / 2);
      return g;
    case 'mesh':
      if (s.vertices && s.triangles) {
        g = new THREE.BufferGeometry();
        g.setAttribute('position', new THREE.Float32BufferAttribute(s.vertices, 3));
        g.setIndex(s.triangles);
        g.computeVertexNormals();
        return g;
      }
      return new THREE.BoxGeometry(0.1, 0.1, 0.1);
    default:
      return new THREE.BoxGeometry(0.05, 0.05, 0.05);
  }
}

// The ground's 1 m grid as a repeated texture (lines drawn into the surface: no z-fighting, and
// mipmapped so distant lines fade instead of flickering). Every 5th line is darker.
function gridTexture(size, renderer) {
  const n = 512;
  const c = document.createElement('canvas');
  c.width = c.height = n;
  const g = c.getContext('2d');
  g.fillStyle = '#c9ced6';
  g.fillRect(0, 0, n, n);
  for (let i = 0; i < 5; ++i) {
    g.fillStyle = i === 0 ? '#7d8591' : '#a3aab4';
    const w = i === 0 ? 4 : 2;
    const x = (i * n) / 5;
    g.fillRect(x, 0, w, n);
    g.fillRect(0, x, n, w);
  }
  const tex = new THREE.CanvasTexture(c);
  tex.wrapS = tex.wrapT = THREE.RepeatWrapping;
  tex.repeat.set(size / 5, size / 5);
  tex.anisotropy = Math.min(8, renderer.capabilities.getMaxAnisotropy());
  tex.colorSpace = THREE.SRGBColorSpace;
  return tex;
}

function setPose(obj, p, at = 0) {
  obj.position.set(p[at], p[at + 1], p[at + 2]);
  obj.quaternion.set(p[at + 4], p[at + 5], p[at + 6], p[at + 3]);
}

// Shapes that share a geometry and a colour are drawn as one InstancedMesh: one draw call per
// kind of shape instead of one per shape (100 ANYmals with their contacts: 18 draw calls per frame
// instead of 1,802, colour and shadow pass together), which is what keeps software WebGL (SwiftShader) and
// weak GPUs at frame rate. Each instance follows a body Group (the pose) times its shape's pose.
class Batches {
  constructor(scene) {
    this.scene = scene;
    this.byKey = new Map();
    this.list = [];
    this.tmp = new THREE.Matrix4();
  }

  // `make` builds the geometry the first time `key` is seen.
  add(key, make, material, group, local, owner) {
    let b = this.byKey.get(key);
    if (!b) {
      b = { geometry: make(), material, items: [], mesh: null };
      this.byKey.set(key, b);
      this.list.push(b);
    }
    b.items.push({ group, local, owner });
  }

  build() {
    for (const b of this.list) {
      const m = new THREE.InstancedMesh(b.geometry, b.material, b.items.length);
      m.instanceMatrix.setUsage(THREE.DynamicDrawUsage);
      m.castShadow = m.receiveShadow = true;
      m.frustumCulled = false;  // instances move anywhere; the bounding sphere is the geometry's
      m.userData = { owners: b.items.map((it) => it.owner) };
      b.mesh = m;
      this.scene.add(m);
      for (const it of b.items) it.group.updateMatrixWorld();
    }
    this.update();
  }

  meshes() { return this.list.map((b) => b.mesh); }

  // after the groups' poses and matrixWorld changed
  update() {
    for (const b of this.list) {
      b.items.forEach((it, i) => {
        this.tmp.multiplyMatrices(it.group.matrixWorld, it.local);
        b.mesh.setMatrixAt(i, this.tmp);
      });
      b.mesh.instanceMatrix.needsUpdate = true;
    }
  }
}

// Instanced markers (contact points, force arrows, centres of mass) with a capacity that grows.
class Markers {
  constructor(scene, geometry, material, renderOrder) {
    this.scene = scene;
    this.geometry = geometry;
    this.material = material;
    this.renderOrder = renderOrder;
    this.mesh = null;
    this.reserve(16);
  }

  reserve(n) {
    if (this.mesh && this.mesh.instanceMatrix.count >= n) return;
    const cap = Math.max(n, 2 * (this.mesh ? this.mesh.instanceMatrix.count : 0));
    const visible = this.mesh ? this.mesh.visible : true;
    if (this.mesh) {
      this.scene.remove(this.mesh);
      this.mesh.dispose();
    }
    this.mesh = new THREE.InstancedMesh(this.geometry, this.material, cap);
    this.mesh.instanceMatrix.setUsage(THREE.DynamicDrawUsage);
    this.mesh.frustumCulled = false;
    this.mesh.renderOrder = this.renderOrder;
    this.mesh.count = 0;
    this.mesh.visible = visible;
    this.scene.add(this.mesh);
  }

  set(i, m) { this.mesh.setMatrixAt(i, m); }

  finish(n) {
    this.mesh.count = n;
    this.mesh.instanceMatrix.needsUpdate = true;
  }
}

// Whether WebGL runs in software (SwiftShader, llvmpipe): asked on a throwaway context because
// the antialiasing of the real one is fixed when it is created.
function softwareRenderer() {
  try {
    const gl = document.createElement('canvas').getContext('webgl2') || document.createElement('canvas').getContext('webgl');
    if (!gl) return false;
    const info = gl.getExtension('WEBGL_debug_renderer_info');
    const name = info ? gl.getParameter(info.UNMASKED_RENDERER_WEBGL) : gl.getParameter(gl.RENDERER);
    gl.getExtension('WEBGL_lose_context')?.loseContext();
    return /swiftshader|llvmpipe|software|softpipe/i.test(String(name));
  } catch (e) {
    return false;
  }
}

export class SceneView {
  constructor(container, scene, options = {}) {
    this.desc = scene;
    // software WebGL (unless `fullQuality`, as for video frames): no multisampling and plain PCF shadows from a smaller map (the soft PCF
    // kernel and 4x MSAA cost more than the rest of the frame there)
    this.software = !options.fullQuality && softwareRenderer();
    this.renderer = new THREE.WebGLRenderer({ antialias: !this.software, preserveDrawingBuffer: !!options.preserveDrawingBuffer });
    this.maxPixelRatio = Math.min(window.devicePixelRatio || 1, 2);
    this.resolution = 1;  // drawing-buffer scale of draw() (dynamic resolution)
    this.renderMs = 0;
    this.pixelRatio = this.maxPixelRatio;
    this.renderer.setPixelRatio(this.pixelRatio);
    this.renderer.shadowMap.enabled = true;
    this.renderer.shadowMap.type = this.software ? THREE.PCFShadowMap : THREE.PCFSoftShadowMap;
    container.appendChild(this.renderer.domElement);
    this.container = container;

    this.scene = new THREE.Scene();
    this.scene.background = new THREE.Color(0xdfe6ee);
    this.scene.fog = new THREE.Fog(0xdfe6ee, 30, 120);
    this.camera = new THREE.PerspectiveCamera(45, 1, 0.01, 500);
    this.camera.up.copy(UP);
    this.camera.position.set(2.2, -2.6, 1.5);
    this.controls = new OrbitControls(this.camera, this.renderer.domElement);
    this.controls.target.set(0, 0, 0.4);
    this.controls.enableDamping = true;

    this.scene.add(new THREE.HemisphereLight(0xffffff, 0x8d8d8d, 1.6));
    const sun = new THREE.DirectionalLight(0xffffff, 2.2);
    sun.position.set(3, -4, 8);
    sun.castShadow = true;
    sun.shadow.mapSize.set(this.software ? 1024 : 2048, this.software ? 1024 : 2048);
    const sc = sun.shadow.camera;
    sc.left = sc.bottom = -4;
    sc.right = sc.top = 4;
    sc.near = 0.5;
    sc.far = 30;
    sun.shadow.bias = -0.0005;
    this.sun = sun;
    this.scene.add(sun);
    this.scene.add(sun.target);

    this.bodies = [];  // [system][body] Group (poses only; the shapes are instances in batches)
    this.frames = [];  // AxesHelpers
    this.rods = [];
    this.rodGeometry = new THREE.CylinderGeometry(0.018, 0.018, 1, this.software ? 6 : 10, 1, this.software);
    this.batches = new Batches(this.scene);
    this.materials = new Map();  // robot surfaces by colour
    this.buildStatic(scene.static || []);
    this.buildSystems(scene.systems || []);
    this.batches.build();
    this.pickables = this.batches.meshes();
    // centres of mass, contact points and force arrows (shaft and head): drawn over everything
    this.comMarkers = new Markers(this.scene, new THREE.SphereGeometry(0.025, 16, 12),
      new THREE.MeshBasicMaterial({ color: 0x111111, depthTest: false }), 10);
    this.comMarkers.reserve(this.bodies.length);
    const shaft = new THREE.CylinderGeometry(1, 1, 1, 8);
    shaft.translate(0, 0.5, 0);  // from the origin along +y
    const head = new THREE.ConeGeometry(1, 1, 12);
    head.translate(0, 0.5, 0);
    const red = new THREE.MeshBasicMaterial({ color: 0xd62828, depthTest: false });
    this.pointMarkers = new Markers(this.scene, new THREE.SphereGeometry(0.012, 10, 8),
      new THREE.MeshBasicMaterial({ color: 0x1d3557, depthTest: false }), 11);
    this.shaftMarkers = new Markers(this.scene, shaft, red, 11);
    this.headMarkers = new Markers(this.scene, head, red, 11);
    // all rods in one instanced draw call (100 ANYmals have 1,600)
    this.rodMesh = new THREE.InstancedMesh(this.rodGeometry,
      this.surface({ color: 0x3e4c59, roughness: 0.6 }), Math.max(1, this.rods.length));
    this.rodMesh.count = this.rods.length;
    this.rodMesh.castShadow = true;
    this.rodMesh.frustumCulled = false;
    this.scene.add(this.rodMesh);

    this.forceScale = 0.002;  // metres per newton
    this.showContacts = true;
    this.follow = true;
    this.lastFollow = new THREE.Vector3();  // the base position the camera last followed
    this.following = false;
    this.resize();
    window.addEventListener('resize', () => this.resize());
  }

  // A lit surface: physically based (roughness, metalness) on a GPU; Lambert's diffuse model in
  // software WebGL, where the PBR fragment shader over a screen of ground is most of the frame.
  surface(params) {
    if (!this.software) return new THREE.MeshStandardMaterial(params);
    const { roughness, metalness, ...rest } = params;
    return new THREE.MeshLambertMaterial(rest);
  }

  buildStatic(list) {
    for (const o of list) {
      if (o.type === 'plane') {
        const isGround = Math.abs(o.pose[3]) > 0.999 || o.name === 'ground';
        const size = isGround ? 400 : 30;
        const mat = isGround
          ? this.surface({ map: gridTexture(size, this.renderer), roughness: 0.95 })
          : this.surface({ color: 0x9aa7b8, transparent: true, opacity: 0.35, side: THREE.DoubleSide });
        const plane = new THREE.Mesh(new THREE.PlaneGeometry(size, size), mat);
        plane.receiveShadow = true;
        setPose(plane, o.pose);
        this.scene.add(plane);
      } else {
        for (const s of o.shapes || []) {
          const m = new THREE.Mesh(shapeGeometry(s), this.surface({ color: s.colour || '#9aa0a6', roughness: 0.8 }));
          setPose(m, s.pose);
          m.castShadow = m.receiveShadow = true;
          this.scene.add(m);
        }
      }
    }
  }

  buildSystems(systems) {
    systems.forEach((sys, si) => {
      const groups = [];
      for (let b = 0; b < sys.nb; ++b) {
        const g = new THREE.Group();
        const axes = new THREE.AxesHelper(0.12);
        axes.visible = false;
        g.add(axes);
        this.frames.push(axes);
        this.scene.add(g);
        groups.push(g);
      }
      const colour = new THREE.Color(sys.colour || '#e8a33d');
      sys.shapes.forEach((s) => {
        const c = colour.clone();
        if (s.type === 'sphere' && sys.nb > 1) c.multiplyScalar(0.45);  // feet darker
        const hex = c.getHexString();
        // a mesh is keyed by its file (each robot's copy of a file is the same triangles) unless
        // it has none; primitives by their type and size
        const geom = s.type === 'mesh' ? `mesh:${s.mesh || `${sys.name}/${s.name}`}:${s.vertices ? s.vertices.length : 0}`
          : `${s.type}:${s.size.join(',')}`;
        const key = `${geom}|${hex}`;
        if (!this.materials.has(hex)) this.materials.set(hex, this.surface({ color: c, roughness: 0.55, metalness: 0.1 }));
        const local = new THREE.Object3D();
        setPose(local, s.pose);
        local.updateMatrix();
        this.batches.add(key, () => shapeGeometry(s, this.software), this.materials.get(hex), groups[s.body], local.matrix.clone(),
          { system: si, body: s.body });
      });
      // skeleton: a rod from each body's origin to its parent's, and to shapes far from the
      // origin (e.g. feet on the shanks), so robots whose collision model is only feet and a
      // torso still read as robots
      const zero = new THREE.Vector3();
      const rod = (from, fromLocal, to, toLocal) => this.rods.push({ si, from, fromLocal, to, toLocal });
      sys.bodies.forEach((b, i) => { if (b.parent >= 0) rod(b.parent, zero, i, zero); });
      sys.shapes.forEach((sh) => {
        const p = new THREE.Vector3(sh.pose[0], sh.pose[1], sh.pose[2]);
        if (p.length() > 0.05) rod(sh.body, zero, sh.body, p);
      });
      this.bodies.push(groups);
    });
  }

  setFramesVisible(v) { for (const a of this.frames) a.visible = v; }
  setComVisible(v) { this.comMarkers.mesh.visible = v; }

  // Poses, COM and contacts of one decoded frame (recording.js decodeFrame).
  apply(frame) {
    const m = tmp.m;
    let nc = 0;
    frame.systems.forEach((s, si) => {
      const groups = this.bodies[si];
      if (!groups) return;
      for (let b = 0; b < groups.length; ++b) {
        setPose(groups[b], s.poses, 7 * b);
        groups[b].updateMatrixWorld();
      }
      this.comMarkers.set(nc++, m.makeTranslation(s.com[0], s.com[1], s.com[2]));
    });
    this.comMarkers.finish(nc);
    this.batches.update();
    this.updateRods();
    this.applyContacts(frame);
    this.followTarget();
  }

  updateRods() {
    const { a, b, d, q, scale, m } = tmp;
    this.rods.forEach((r, i) => {
      const ga = this.bodies[r.si][r.from];
      const gb = this.bodies[r.si][r.to];
      a.copy(r.fromLocal).applyQuaternion(ga.quaternion).add(ga.position);
      b.copy(r.toLocal).applyQuaternion(gb.quaternion).add(gb.position);
      d.subVectors(b, a);
      const len = d.length();
      if (len > 1e-4) q.setFromUnitVectors(Y_AXIS, d.divideScalar(len));
      scale.set(len > 1e-4 ? 1 : 0, len, len > 1e-4 ? 1 : 0);
      m.compose(a.add(b).multiplyScalar(0.5), q, scale);
      this.rodMesh.setMatrixAt(i, m);
    });
    this.rodMesh.instanceMatrix.needsUpdate = true;
  }

  applyContacts(frame) {
    const n = this.showContacts ? frame.contacts.length : 0;
    const dt = (this.desc.dt || 0.001);
    for (const k of [this.pointMarkers, this.shaftMarkers, this.headMarkers]) k.reserve(n);
    const { a: p, d: dir, q, scale, m } = tmp;
    let arrows = 0;
    for (let i = 0; i < n; ++i) {
      const c = frame.contacts[i];
      p.set(c.position[0], c.position[1], c.position[2]);
      this.pointMarkers.set(i, m.makeTranslation(p.x, p.y, p.z));
      dir.set(c.impulse[0], c.impulse[1], c.impulse[2]);
      const force = dir.length() / dt;
      const len = force * this.forceScale;
      if (len < 1e-4) continue;
      dir.normalize();
      q.setFromUnitVectors(Y_AXIS, dir);
      const headLength = Math.min(0.05, 0.3 * len + 0.01);
      const headWidth = Math.min(0.03, 0.2 * len + 0.006);
      const shaftLength = Math.max(len - headLength, 1e-4);
      this.shaftMarkers.set(arrows, m.compose(p, q, scale.set(0.003, shaftLength, 0.003)));
      p.addScaledVector(dir, shaftLength);  // the head starts at the shaft's end
      this.headMarkers.set(arrows, m.compose(p, q, scale.set(headWidth / 2, headLength, headWidth / 2)));
      ++arrows;
    }
    this.pointMarkers.finish(n);
    this.shaftMarkers.finish(arrows);
    this.headMarkers.finish(arrows);
  }

  // The orbit target (and the camera with it) follows the first system's base; the sun's
  // shadow camera too, so shadows stay sharp wherever the robot goes.
  followTarget() {
    const g = this.bodies[0] && this.bodies[0][0];
    if (!g) return;
    const p = g.position;
    if (this.follow) {
      if (this.following) {
        const d = tmp.d.subVectors(p, this.lastFollow);
        d.z = 0;
        this.camera.position.add(d);
        this.controls.target.add(d);
      }
      this.lastFollow.copy(p);
      this.following = true;
    } else {
      this.following = false;
    }
    this.sun.target.position.set(p.x, p.y, 0);
    this.sun.position.set(p.x + 3, p.y - 4, 8);
  }

  frameAll() {
    const box = new THREE.Box3();
    for (const m of this.pickables) {
      m.computeBoundingBox();  // over all instances, in world coordinates (the batches sit at the origin)
      box.union(m.boundingBox);
    }
    if (box.isEmpty()) return;
    const c = box.getCenter(new THREE.Vector3());
    const r = Math.max(0.5, box.getSize(new THREE.Vector3()).length() * 0.6);
    this.controls.target.copy(c);
    this.camera.position.set(c.x + 1.3 * r, c.y - 1.6 * r, c.z + 0.9 * r);
    const ext = Math.max(4, r * 1.5);
    const sc = this.sun.shadow.camera;
    sc.left = sc.bottom = -ext;
    sc.right = sc.top = ext;
    sc.updateProjectionMatrix();
    this.following = false;  // the next frame starts following from here
  }

  // Dynamic resolution for the interactive loops (not for video frames): `now` is the frame's
  // requestAnimationFrame time. When the page draws fewer than 55 frames per second over a second,
  // the drawing buffer shrinks by a fifth (down to half the window's pixels per axis; the browser
  // scales the canvas up); when frames keep the display rate and the render call uses under a
  // third of the 16.7 ms budget, it grows back. Returns the current scale (1 = full resolution).
  adapt(now, renderMs) {
    if (this.fixedSize) return 1;
    const a = this.adaptState || (this.adaptState = { t0: now, n: 0, good: 0 });
    ++a.n;
    const dt = now - a.t0;
    if (dt < 1000) return this.pixelRatio / this.maxPixelRatio;
    const fps = (1000 * (a.n - 1)) / dt;
    a.t0 = now;
    a.n = 0;
    const min = 0.5 * this.maxPixelRatio;
    let next = this.pixelRatio;
    if (fps < 55 && this.pixelRatio > min) {
      next = Math.max(min, this.pixelRatio * 0.8);
      a.good = 0;
    } else if (fps >= 58 && renderMs < 5.5 && this.pixelRatio < this.maxPixelRatio) {
      if (++a.good >= 3) {
        next = Math.min(this.maxPixelRatio, this.pixelRatio * 1.15);
        a.good = 0;
      }
    } else {
      a.good = 0;
    }
    if (next !== this.pixelRatio) {
      this.pixelRatio = next;
      this.renderer.setPixelRatio(next);
      this.resize();
    }
    return this.pixelRatio / this.maxPixelRatio;
  }

  // A fixed drawing-buffer size (video frames), independent of the window.
  setFixedSize(w, h) {
    this.fixedSize = [w, h];
    this.renderer.setPixelRatio(1);
    this.resize();
  }

  resize() {
    const [w, h] = this.fixedSize || [this.container.clientWidth || 800, this.container.clientHeight || 600];
    this.renderer.setSize(w, h, false);
    this.camera.aspect = w / h;
    this.camera.updateProjectionMatrix();
  }

  render() {
    this.controls.update();
    this.renderer.render(this.scene, this.camera);
  }

  // One frame of an interactive loop: adapt the resolution (before drawing: a resize clears the
  // canvas, so never between drawing and display), draw, and keep a running mean of the render
  // call's time (this.renderMs).
  draw(now) {
    this.resolution = this.adapt(now, this.renderMs);
    const r0 = performance.now();
    this.render();
    this.renderMs = 0.9 * this.renderMs + 0.1 * (performance.now() - r0);
  }

  // The body under a pixel (for pushing): {system, body, point (world), local (body frame)}.
  pick(clientX, clientY) {
    const rect = this.renderer.domElement.getBoundingClientRect();
    const ndc = new THREE.Vector2(((clientX - rect.left) / rect.width) * 2 - 1, -((clientY - rect.top) / rect.height) * 2 + 1);
    const ray = new THREE.Raycaster();
    ray.setFromCamera(ndc, this.camera);
    // instances move every frame: their bounding sphere is recomputed for each pick
    for (const m of this.pickables) m.boundingSphere = null;
    const hit = ray.intersectObjects(this.pickables, false)[0];
    if (!hit || hit.instanceId === undefined) return null;
    const { system, body } = hit.object.userData.owners[hit.instanceId];
    const g = this.bodies[system][body];
    const local = g.worldToLocal(hit.point.clone());
    return { system, body, point: hit.point.clone(), local, distance: hit.distance };
  }

  bodyPoint(system, body, local) {
    return this.bodies[system][body].localToWorld(local.clone());
  }

  // The point where a ray through a pixel meets the plane through `p` facing the camera.
  dragPoint(clientX, clientY, p) {
    const rect = this.renderer.domElement.getBoundingClientRect();
    const ndc = new THREE.Vector2(((clientX - rect.left) / rect.width) * 2 - 1, -((clientY - rect.top) / rect.height) * 2 + 1);
    const ray = new THREE.Raycaster();
    ray.setFromCamera(ndc, this.camera);
    const n = this.camera.getWorldDirection(new THREE.Vector3());
    const plane = new THREE.Plane().setFromNormalAndCoplanarPoint(n, p);
    return ray.ray.intersectPlane(plane, new THREE.Vector3());
  }
}

export { THREE };
