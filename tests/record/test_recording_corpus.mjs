// The page's reader (viewer/src/recording.js, parseRecording) on the corpus of
// tests/record/corpus: every file gets the verdict of manifest.json (valid with its frames and
// dropped bytes, or a RecordingError naming the file and the rule of docs/recording.md,
// "Validation"), as the C++ and Python readers do (test_recording_corpus.cpp, .py).
//
// usage: node test_recording_corpus.mjs SOURCE_DIR
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const source = process.argv[2];
const { parseRecording, RecordingError, decodeFrame } = await import(
  pathToFileURL(join(source, 'viewer', 'src', 'recording.js')).href);
const corpus = join(source, 'tests', 'record', 'corpus');
const manifest = JSON.parse(readFileSync(join(corpus, 'manifest.json'), 'utf8'));
const files = readdirSync(corpus).filter((n) => n.endsWith('.imprec')).sort();
const failures = [];
if (JSON.stringify(files) !== JSON.stringify(Object.keys(manifest).sort())) {
  failures.push('the corpus and its manifest list different files');
}
for (const name of files) {
  const path = join(corpus, name);
  const bytes = readFileSync(path);
  // an ArrayBuffer of exactly the file (a Buffer may be a view into a larger pool)
  const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
  const want = manifest[name];
  let got;
  try {
    const r = parseRecording(buffer, path);
    got = { verdict: 'valid', frames: r.offsets.length, dropped_bytes: r.droppedBytes };
    if (Boolean(r.warning) !== Boolean(r.droppedBytes) || (r.warning && !r.warning.includes(`${r.droppedBytes} bytes`))) {
      failures.push(`${name}: warning ${r.warning} for ${r.droppedBytes} dropped bytes`);
    }
    // every frame the reader accepts decodes within the buffer
    for (const at of r.offsets) decodeFrame(buffer, at, r.sizes, r.sensorFloats);
  } catch (e) {
    if (!(e instanceof RecordingError)) {
      failures.push(`${name}: ${e.name} instead of a RecordingError: ${e.message}`);
      continue;
    }
    const m = /\(rule (\d+)\)$/.exec(e.message);
    got = { verdict: 'invalid', rule: m ? Number(m[1]) : null };
    if (!e.message.includes(path) || e.message.includes('\n')) failures.push(`${name}: not one line naming the file: ${e.message}`);
  }
  const same = Object.keys(want).length === Object.keys(got).length && Object.keys(want).every((k) => want[k] === got[k]);
  if (!same) failures.push(`${name}: got ${JSON.stringify(got)}, the manifest says ${JSON.stringify(want)}`);
}
for (const f of failures) console.log(f);
console.log(`${files.length - failures.length} of ${files.length} files got their verdict`);
process.exit(failures.length ? 1 : 0);
