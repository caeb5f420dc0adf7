// The 3D scene of the viewer (three.js, z up): collision geometry of every body from the scene
// description (docs/recording.md "Scene"), ground with grid, body frames, centres of mass,
// contact points with force arrows, shadows, orbit controls and a follow camera.
import * as THREE from 'three';
import { OrbitControls } from 'three/examples/jsm/controls/OrbitControls.js';

const UP = new THREE.Vector3(0, 0, 1);

function shapeGeometry(s) {
  const [a, b, c] = s.size;
  let g;
  switch (s.type) {
    case 'sphere':
      return new THREE.SphereGeometry(a, 24, 16);
    case 'box':
      return new THREE.BoxGeometry(a, b, c);
    case 'cylinder':
      g = new THREE.CylinderGeometry(a, a, b, 24);
      g.rotateX(Math.PI / 2);  // three.js cylinders run along y, ours along z
      return g;
    case 'capsule':
      g = new THREE.CapsuleGeometry(a, b, 8, 16);
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

export class SceneView {
  constructor(container, scene, options = {}) {
    this.desc = scene;
    this.renderer = new THREE.WebGLRenderer({ antialias: true, preserveDrawingBuffer: !!options.preserveDrawingBuffer });
    this.renderer.setPixelRatio(Math.min(window.devicePixelRatio || 1, 2));
    this.renderer.shadowMap.enabled = true;
    this.renderer.shadowMap.type = THREE.PCFSoftShadowMap;
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
    sun.shadow.mapSize.set(2048, 2048);
    const sc = sun.shadow.camera;
    sc.left = sc.bottom = -4;
    sc.right = sc.top = 4;
    sc.near = 0.5;
    sc.far = 30;
    sun.shadow.bias = -0.0005;
    this.sun = sun;
    this.scene.add(sun);
    this.scene.add(sun.target);

    this.bodies = [];  // [system][body] Group
    this.frames = [];  // AxesHelpers
    this.coms = [];
    this.pickables = [];
    this.rods = [];
    this.rodGeometry = new THREE.CylinderGeometry(0.018, 0.018, 1, 10);
    this.buildStatic(scene.static || []);
    this.buildSystems(scene.systems || []);
    // all rods in one instanced draw call (100 ANYmals have 1,600)
    this.rodMesh = new THREE.InstancedMesh(this.rodGeometry,
      new THREE.MeshStandardMaterial({ color: 0x3e4c59, roughness: 0.6 }), Math.max(1, this.rods.length));
    this.rodMesh.count = this.rods.length;
    this.rodMesh.castShadow = true;
    this.rodMesh.frustumCulled = false;
    this.scene.add(this.rodMesh);

    this.contactGroup = new THREE.Group();
    this.scene.add(this.contactGroup);
    this.arrows = [];
    this.points = [];
    this.forceScale = 0.002;  // metres per newton
    this.showContacts = true;
    this.follow = true;
    this.lastFollow = null;
    this.resize();
    window.addEventListener('resize', () => this.resize());
  }

  buildStatic(list) {
    for (const o of list) {
      if (o.type === 'plane') {
        const isGround = Math.abs(o.pose[3]) > 0.999 || o.name === 'ground';
        const size = isGround ? 400 : 30;
        const mat = isGround
          ? new THREE.MeshStandardMaterial({ map: gridTexture(size, this.renderer), roughness: 0.95 })
          : new THREE.MeshStandardMaterial({ color: 0x9aa7b8, transparent: true, opacity: 0.35, side: THREE.DoubleSide });
        const plane = new THREE.Mesh(new THREE.PlaneGeometry(size, size), mat);
        plane.receiveShadow = true;
        setPose(plane, o.pose);
        this.scene.add(plane);
      } else {
        for (const s of o.shapes || []) {
          const m = new THREE.Mesh(shapeGeometry(s), new THREE.MeshStandardMaterial({ color: s.colour || '#9aa0a6', roughness: 0.8 }));
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
        const m = new THREE.Mesh(shapeGeometry(s), new THREE.MeshStandardMaterial({ color: c, roughness: 0.55, metalness: 0.1 }));
        setPose(m, s.pose);
        m.castShadow = true;
        m.receiveShadow = true;
        m.userData = { system: si, body: s.body };
        groups[s.body].add(m);
        this.pickables.push(m);
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
      const com = new THREE.Mesh(new THREE.SphereGeometry(0.025, 16, 12),
        new THREE.MeshBasicMaterial({ color: 0x111111, depthTest: false }));
      com.renderOrder = 10;
      this.scene.add(com);
      this.coms.push(com);
      this.bodies.push(groups);
    });
  }

  setFramesVisible(v) { for (const a of this.frames) a.visible = v; }
  setComVisible(v) { for (const c of this.coms) c.visible = v; }

  // Poses, COM and contacts of one decoded frame (recording.js decodeFrame).
  apply(frame) {
    frame.systems.forEach((s, si) => {
      const groups = this.bodies[si];
      if (!groups) return;
      for (let b = 0; b < groups.length; ++b) setPose(groups[b], s.poses, 7 * b);
      this.coms[si].position.set(s.com[0], s.com[1], s.com[2]);
    });
    this.updateRods();
    this.applyContacts(frame);
    this.followTarget();
  }

  updateRods() {
    const a = new THREE.Vector3();
    const b = new THREE.Vector3();
    const d = new THREE.Vector3();
    const q = new THREE.Quaternion();
    const scale = new THREE.Vector3();
    const m = new THREE.Matrix4();
    const Y = new THREE.Vector3(0, 1, 0);
    this.rods.forEach((r, i) => {
      const ga = this.bodies[r.si][r.from];
      const gb = this.bodies[r.si][r.to];
      a.copy(r.fromLocal).applyQuaternion(ga.quaternion).add(ga.position);
      b.copy(r.toLocal).applyQuaternion(gb.quaternion).add(gb.position);
      d.subVectors(b, a);
      const len = d.length();
      if (len > 1e-4) q.setFromUnitVectors(Y, d.divideScalar(len));
      scale.set(len > 1e-4 ? 1 : 0, len, len > 1e-4 ? 1 : 0);
      m.compose(a.add(b).multiplyScalar(0.5), q, scale);
      this.rodMesh.setMatrixAt(i, m);
    });
    this.rodMesh.instanceMatrix.needsUpdate = true;
  }

  applyContacts(frame) {
    const n = this.showContacts ? frame.contacts.length : 0;
    const dt = (this.desc.dt || 0.001);
    while (this.arrows.length < n) {
      const a = new THREE.ArrowHelper(UP, new THREE.Vector3(), 0.1, 0xd62828, 0.04, 0.025);
      a.line.material.depthTest = false;
      a.renderOrder = 11;
      const p = new THREE.Mesh(new THREE.SphereGeometry(0.012, 10, 8), new THREE.MeshBasicMaterial({ color: 0x1d3557, depthTest: false }));
      p.renderOrder = 11;
      this.contactGroup.add(a);
      this.contactGroup.add(p);
      this.arrows.push(a);
      this.points.push(p);
    }
    const dir = new THREE.Vector3();
    for (let i = 0; i < this.arrows.length; ++i) {
      const on = i < n;
      this.arrows[i].visible = on;
      this.points[i].visible = on;
      if (!on) continue;
      const c = frame.contacts[i];
      this.points[i].position.set(c.position[0], c.position[1], c.position[2]);
      dir.set(c.impulse[0], c.impulse[1], c.impulse[2]);
      const force = dir.length() / dt;
      const len = force * this.forceScale;
      if (len < 1e-4) {
        this.arrows[i].visible = false;
        continue;
      }
      this.arrows[i].position.copy(this.points[i].position);
      this.arrows[i].setDirection(dir.normalize());
      this.arrows[i].setLength(len, Math.min(0.05, 0.3 * len + 0.01), Math.min(0.03, 0.2 * len + 0.006));
    }
  }

  // The orbit target (and the camera with it) follows the first system's base; the sun's
  // shadow camera too, so shadows stay sharp wherever the robot goes.
  followTarget() {
    const g = this.bodies[0] && this.bodies[0][0];
    if (!g) return;
    const p = g.position;
    if (this.follow) {
      if (this.lastFollow) {
        const d = p.clone().sub(this.lastFollow);
        d.z = 0;
        this.camera.position.add(d);
        this.controls.target.add(d);
      }
      this.lastFollow = p.clone();
    } else {
      this.lastFollow = null;
    }
    this.sun.target.position.set(p.x, p.y, 0);
    this.sun.position.set(p.x + 3, p.y - 4, 8);
  }

  frameAll() {
    const box = new THREE.Box3();
    for (const groups of this.bodies) for (const g of groups) box.expandByObject(g);
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
    this.lastFollow = null;
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

  // The body under a pixel (for pushing): {system, body, point (world), local (body frame)}.
  pick(clientX, clientY) {
    const rect = this.renderer.domElement.getBoundingClientRect();
    const ndc = new THREE.Vector2(((clientX - rect.left) / rect.width) * 2 - 1, -((clientY - rect.top) / rect.height) * 2 + 1);
    const ray = new THREE.Raycaster();
    ray.setFromCamera(ndc, this.camera);
    const hit = ray.intersectObjects(this.pickables, false)[0];
    if (!hit) return null;
    const { system, body } = hit.object.userData;
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
