// Plots beside the 3D view (uPlot), synchronised with the timeline: a vertical line marks the
// current time; clicking a plot seeks there (replay).
import uPlot from 'uplot';
import css from 'uplot/dist/uPlot.min.css';

let cssDone = false;
function injectCss() {
  if (cssDone) return;
  const s = document.createElement('style');
  s.textContent = css;
  document.head.appendChild(s);
  cssDone = true;
}

function cursorLine(getTime) {
  return {
    hooks: {
      draw: [
        (u) => {
          const t = getTime();
          if (t == null || !isFinite(t)) return;
          const x = u.valToPos(t, 'x', true);
          if (x < u.bbox.left || x > u.bbox.left + u.bbox.width) return;
          const ctx = u.ctx;
          ctx.save();
          ctx.strokeStyle = '#d62828';
          ctx.lineWidth = 1.5 * devicePixelRatio;
          ctx.beginPath();
          ctx.moveTo(x, u.bbox.top);
          ctx.lineTo(x, u.bbox.top + u.bbox.height);
          ctx.stroke();
          ctx.restore();
        },
      ],
    },
  };
}

const COLOURS = ['#1d3557', '#e76f51', '#2a9d8f', '#8d5fd3'];

export class Plots {
  // specs: [{id, title, series: [{label, scale?}], log?: {scale}}]
  constructor(container, specs, getTime, onSeek) {
    injectCss();
    this.plots = {};
    this.getTime = getTime;
    const width = Math.max(280, container.clientWidth - 16);
    for (const spec of specs) {
      const div = document.createElement('div');
      div.className = 'plot';
      container.appendChild(div);
      const scales = { x: { time: false } };
      const axes = [{ label: 't (s)', size: 30 }];
      const units = [];
      spec.series.forEach((s) => {
        const sc = s.scale || 'y';
        if (!units.includes(sc)) {
          units.push(sc);
          scales[sc] = sc === 'log' ? { distr: 3 } : {};
          const axis = { scale: sc, label: s.unit || '', side: units.length === 1 ? 3 : 1, size: 52,
            grid: { show: units.length === 1 } };
          if (sc === 'log') axis.values = (u, vals) => vals.map((v) => (v == null ? '' : v.toExponential(0)));
          axes.push(axis);
        }
      });
      const opts = {
        title: spec.title,
        width,
        height: 150,
        scales,
        axes,
        legend: { live: false },
        cursor: { drag: { x: false, y: false } },
        series: [{ label: 't' }].concat(spec.series.map((s, i) => ({
          label: s.label, stroke: s.colour || COLOURS[i % COLOURS.length], width: 1.2, scale: s.scale || 'y',
          points: { show: false },
        }))),
        plugins: [cursorLine(getTime)],
      };
      const data = [[]].concat(spec.series.map(() => []));
      const u = new uPlot(opts, data, div);
      if (onSeek) {
        u.over.addEventListener('click', () => {
          const t = u.posToVal(u.cursor.left, 'x');
          if (isFinite(t)) onSeek(t);
        });
      }
      this.plots[spec.id] = u;
    }
  }

  setData(id, data) {
    const u = this.plots[id];
    if (u) u.setData(data, true);
  }

  setTitle(id, title) {
    const u = this.plots[id];
    if (u && u.root.querySelector('.u-title')) u.root.querySelector('.u-title').textContent = title;
  }

  redraw() {
    for (const u of Object.values(this.plots)) u.redraw(false, false);
  }

  resize(width) {
    for (const u of Object.values(this.plots)) u.setSize({ width: Math.max(280, width - 16), height: 150 });
  }
}
