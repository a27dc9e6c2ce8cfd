#!/usr/bin/env node
// ctxkit's tokenizer against the node tokenizers, in one run, on the same
// bytes. Install the peers in a scratch directory (never in the checkout):
//
//   mkdir -p /tmp/ctxkit-npm-bench && cd /tmp/ctxkit-npm-bench && npm init -y &&
//   npm install tiktoken@1.0.22 gpt-tokenizer@4.0.0 js-tiktoken@1.0.21
//
// then, from the checkout, after a Release build with benchmarks
// (cmake --preset release && cmake --build --preset release):
//
//   node bench/compare_tokenizers.mjs \
//     --ctxkit build/release/bench/tokenizer_throughput \
//     --node-modules /tmp/ctxkit-npm-bench/node_modules
//
// Options: --encodings cl100k_base,o200k_base   --inputs english,cjk,...
//          --peers tiktoken,gpt-tokenizer,gpt-tokenizer-cache,js-tiktoken
//          --min-time 0.5 (seconds per measurement)   --timeout 30 (seconds
//          per peer, encoding and input)   --json FILE (all results)
//          --keep (keep the temporary directory of inputs and ids)
//          --pathological-bytes N (size of the generated inputs, 1 MiB by
//          default; e.g. 16384 to check ids on inputs the peers can finish)
//
// How it works. tokenizer_throughput builds the inputs (bench/README.md says
// what they are), writes their bytes to a temporary directory and measures
// ctxkit on those same bytes. Each peer then runs in a child node process
// per (encoding, input), reading the files written: a peer that is slower
// than --timeout on a pathological input is killed and reported "timeout",
// one that dies "crash", and the run goes on. Every child writes its token
// ids; they are compared with ctxkit's id for id. A disagreement with
// tiktoken (OpenAI's own Rust core, compiled to WASM) prints a MISMATCH line
// naming the input, the first differing token index and its byte offset.
//
// Peers: tiktoken (WASM, encode), gpt-tokenizer with its merge cache off
// (setMergeCacheSize(0)) and on (the default, 100,000 entries; the cache is
// warm after the first run, as in a process tokenizing similar text again),
// both for encode and countTokens, and js-tiktoken (pure JS, lite build with
// the encoding's ranks, encode). tiktoken and js-tiktoken have no count: their
// count is encode().length, so their count speed is their encode speed.
// MB is 10^6 bytes; every figure is one thread.

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const ALL_PEERS = ['tiktoken', 'gpt-tokenizer', 'gpt-tokenizer-cache', 'js-tiktoken'];

function parseArgs(argv) {
  const opts = {
    encodings: 'cl100k_base,o200k_base',
    peers: ALL_PEERS.join(','),
    'min-time': '0.5',
    timeout: '30',
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (!arg.startsWith('--')) usage(`unexpected argument ${arg}`);
    const eq = arg.indexOf('=');
    if (eq >= 0) {
      opts[arg.slice(2, eq)] = arg.slice(eq + 1);
    } else if (arg === '--keep' || arg === '--worker') {
      opts[arg.slice(2)] = true;
    } else {
      if (i + 1 >= argv.length) usage(`${arg} needs a value`);
      opts[arg.slice(2)] = argv[++i];
    }
  }
  return opts;
}

function usage(message) {
  console.error(`compare_tokenizers: ${message}`);
  console.error(
    'usage: node bench/compare_tokenizers.mjs --ctxkit PATH/tokenizer_throughput ' +
      '--node-modules DIR [--encodings a,b] [--inputs x,y] [--peers p,q] ' +
      '[--min-time S] [--timeout S] [--json FILE] [--keep]');
  process.exit(2);
}

// FNV-1a 64, as tokenizer_throughput computes it.
function fnv1a64(bytes) {
  let h = 0xcbf29ce484222325n;
  const prime = 0x100000001b3n;
  const mask = (1n << 64n) - 1n;
  for (const b of bytes) {
    h ^= BigInt(b);
    h = (h * prime) & mask;
  }
  return h.toString(16).padStart(16, '0');
}

// Runs `op` once, then again until minTime seconds have passed, as
// tokenizer_throughput does.
function measure(bytes, minTime, op) {
  let t0 = performance.now();
  let result = op();
  const firstMs = performance.now() - t0;
  if (firstMs / 1e3 >= minTime) return { result, firstMs, mbS: bytes / (firstMs / 1e3) / 1e6 };
  let reps = 0;
  t0 = performance.now();
  let elapsed = 0;
  do {
    result = op();
    reps++;
    elapsed = (performance.now() - t0) / 1e3;
  } while (elapsed < minTime);
  return { result, firstMs, mbS: (bytes * reps) / elapsed / 1e6 };
}

// ---------------------------------------------------------------- worker --

// One (peer, encoding, input) in its own process. Prints one JSON line per
// phase as soon as it is done, so that a timeout in a later phase keeps the
// earlier results.
function worker(opts) {
  const { peer, encoding, input, ids } = opts;
  const minTime = Number(opts['min-time']);
  const require = createRequire(path.join(path.resolve(opts['node-modules']), 'noop.js'));
  const text = fs.readFileSync(input, 'utf8');
  const bytes = Buffer.byteLength(text, 'utf8');
  const emit = (o) => process.stdout.write(JSON.stringify(o) + '\n');

  const t0 = performance.now();
  let encode;
  let count = null;
  if (peer === 'tiktoken') {
    const { get_encoding } = require('tiktoken');
    const enc = get_encoding(encoding);
    encode = (s) => enc.encode(s);
  } else if (peer === 'gpt-tokenizer' || peer === 'gpt-tokenizer-cache') {
    const mod = require(`gpt-tokenizer/encoding/${encoding}`);
    if (peer === 'gpt-tokenizer') mod.setMergeCacheSize(0);
    encode = (s) => mod.encode(s);
    count = (s) => mod.countTokens(s);
  } else if (peer === 'js-tiktoken') {
    const { Tiktoken } = require('js-tiktoken/lite');
    const ranksModule = require(`js-tiktoken/ranks/${encoding}`);
    const enc = new Tiktoken(ranksModule.default ?? ranksModule);
    encode = (s) => enc.encode(s);
  } else {
    throw new Error(`unknown peer ${peer}`);
  }
  emit({ phase: 'load', load_ms: performance.now() - t0 });

  const e = measure(bytes, minTime, () => encode(text));
  const idArray = Uint32Array.from(e.result);
  fs.writeFileSync(ids, Buffer.from(idArray.buffer, idArray.byteOffset, idArray.byteLength));
  emit({ phase: 'encode', encode_mb_s: e.mbS, first_encode_ms: e.firstMs, tokens: idArray.length });

  if (count) {
    const c = measure(bytes, minTime, () => count(text));
    emit({ phase: 'count', count_mb_s: c.mbS, first_count_ms: c.firstMs, count_tokens: c.result });
  }
}

// ---------------------------------------------------------------- parent --

function runCtxkit(opts, dir) {
  const args = [
    `--encodings=${opts.encodings}`,
    `--min-time=${opts['min-time']}`,
    `--timeout=${opts.timeout}`,
    `--write-inputs=${dir}/inputs`,
    `--ids-dir=${dir}/ids`,
  ];
  if (opts.inputs) args.push(`--inputs=${opts.inputs}`);
  if (opts['pathological-bytes']) args.push(`--pathological-bytes=${opts['pathological-bytes']}`);
  console.error(`running ${opts.ctxkit} ${args.join(' ')}`);
  const r = spawnSync(opts.ctxkit, args, { encoding: 'utf8', maxBuffer: 1 << 26 });
  if (r.error) usage(`cannot run ${opts.ctxkit}: ${r.error.message}`);
  process.stderr.write(r.stderr);
  const results = new Map();
  for (const line of r.stdout.split('\n')) {
    if (!line.trim()) continue;
    const o = JSON.parse(line);
    results.set(`${o.encoding}/${o.input}`, o);
  }
  return results;
}

function readInputs(dir) {
  const inputs = [];
  for (const line of fs.readFileSync(path.join(dir, 'inputs.jsonl'), 'utf8').split('\n')) {
    if (!line.trim()) continue;
    const o = JSON.parse(line);
    const file = path.join(dir, `${o.input}.txt`);
    const raw = fs.readFileSync(file);
    if (raw.length !== o.bytes || fnv1a64(raw) !== o.fnv1a64) {
      throw new Error(`${file}: bytes differ from what ctxkit measured`);
    }
    // The peers take a JS string: it must round-trip to the same bytes.
    if (!Buffer.from(raw.toString('utf8'), 'utf8').equals(raw)) {
      throw new Error(`${file}: not valid UTF-8`);
    }
    inputs.push({ ...o, file });
  }
  return inputs;
}

function runPeer(opts, peer, encoding, input, idsFile) {
  const self = fileURLToPath(import.meta.url);
  const args = [
    // Large inputs make large id arrays; give every peer the same roomy heap.
    '--max-old-space-size=4096',
    self, '--worker', '--peer', peer, '--encoding', encoding,
    '--input', input.file, '--ids', idsFile,
    '--min-time', opts['min-time'], '--node-modules', opts['node-modules'],
  ];
  const r = spawnSync(process.execPath, args, {
    encoding: 'utf8',
    timeout: Number(opts.timeout) * 1000,
    killSignal: 'SIGKILL',
    maxBuffer: 1 << 26,
  });
  const out = { status: 'ok' };
  for (const line of (r.stdout ?? '').split('\n')) {
    if (line.trim()) Object.assign(out, JSON.parse(line));
  }
  if (r.error?.code === 'ETIMEDOUT') {
    out.status = 'timeout';
  } else if (r.status !== 0) {
    out.status = 'crash';
    const err = (r.stderr ?? '').split('\n').find((l) => /Error|error|heap/.test(l));
    out.error = err ? err.trim() : `exit ${r.status} signal ${r.signal}`;
  }
  out.has_ids = out.tokens !== undefined;
  return out;
}

function readIds(file) {
  const b = fs.readFileSync(file);
  return new Uint32Array(b.buffer, b.byteOffset, b.length / 4);
}

// Index of the first differing id, or -1.
function firstDifference(a, b) {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return i;
  return a.length === b.length ? -1 : n;
}

function byteOffsetOf(opts, encoding, ids, index) {
  try {
    const require = createRequire(path.join(path.resolve(opts['node-modules']), 'noop.js'));
    const { get_encoding } = require('tiktoken');
    const enc = get_encoding(encoding);
    const n = enc.decode(ids.slice(0, index)).length;
    enc.free();
    return n;
  } catch {
    return '?';
  }
}

// One decimal, or two significant digits below 1 (a timeout-prone peer's
// 0.04 MB/s is not 0.0).
const fmt = (x, digits = 1) => {
  if (x === undefined || x === null) return '-';
  const v = Number(x);
  return v !== 0 && Math.abs(v) < 1 && digits > 0 ? v.toPrecision(2) : v.toFixed(digits);
};

function table(header, rows) {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const line = (cells) => cells.map((c, i) => (i === 0 ? String(c).padEnd(widths[i]) : String(c).padStart(widths[i]))).join('  ');
  console.log(line(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const r of rows) console.log(line(r));
  console.log();
}

function median(xs) {
  const s = xs.filter((x) => x !== undefined).sort((a, b) => a - b);
  return s.length ? s[Math.floor(s.length / 2)] : undefined;
}

function main() {
  const opts = parseArgs(process.argv.slice(2));
  if (opts.worker) return worker(opts);
  if (!opts.ctxkit || !opts['node-modules']) usage('--ctxkit and --node-modules are required');
  const encodings = opts.encodings.split(',');
  const peers = opts.peers.split(',');
  for (const p of peers) if (!ALL_PEERS.includes(p)) usage(`unknown peer ${p}`);

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ctxkit-compare-'));
  fs.mkdirSync(path.join(dir, 'inputs'));
  fs.mkdirSync(path.join(dir, 'ids'));
  const ctxkit = runCtxkit(opts, dir);
  const inputs = readInputs(path.join(dir, 'inputs'));

  const versions = {};
  for (const pkg of ['tiktoken', 'gpt-tokenizer', 'js-tiktoken']) {
    try {
      versions[pkg] = JSON.parse(fs.readFileSync(path.join(opts['node-modules'], pkg, 'package.json'), 'utf8')).version;
    } catch {
      versions[pkg] = 'missing';
    }
  }
  console.log(`node ${process.version}; ${Object.entries(versions).map(([k, v]) => `${k}@${v}`).join(', ')}`);
  console.log(`cpu: ${os.cpus()[0]?.model ?? '?'} (${os.cpus().length} threads; load average ${os.loadavg().map((x) => x.toFixed(1)).join(' ')}); min-time ${opts['min-time']} s; timeout ${opts.timeout} s`);
  console.log('inputs:');
  for (const i of inputs) console.log(`  ${i.input.padEnd(16)} ${String(i.bytes).padStart(8)} B  ${i.source}`);
  console.log();

  const peerResults = new Map();  // `${peer}/${enc}/${input}`
  const sameIds = new Map();  // `${peer}/${enc}/${input}` -> ids equal to ctxkit's
  const problems = [];
  for (const encoding of encodings) {
    for (const input of inputs) {
      const key = `${encoding}/${input.input}`;
      const ck = ctxkit.get(key);
      const ckIdsFile = path.join(dir, 'ids', `${encoding}.${input.input}.ids`);
      const ckIds = ck?.status === 'ok' ? readIds(ckIdsFile) : null;
      for (const peer of peers) {
        const idsFile = path.join(dir, 'ids', `${peer}.${encoding}.${input.input}.ids`);
        process.stderr.write(`${peer} ${key} ... `);
        const r = runPeer(opts, peer, encoding, input, idsFile);
        process.stderr.write(`${r.status}${r.encode_mb_s ? ` ${fmt(r.encode_mb_s)} MB/s` : ''}\n`);
        peerResults.set(`${peer}/${key}`, r);
        if (!ckIds || !r.has_ids) continue;
        const peerIds = readIds(idsFile);
        const at = firstDifference(ckIds, peerIds);
        sameIds.set(`${peer}/${key}`, at < 0);
        if (r.count_tokens !== undefined && r.count_tokens !== r.tokens) {
          problems.push(`NOTE ${peer} ${key}: countTokens ${r.count_tokens} != encode length ${r.tokens}`);
        }
        if (at < 0) continue;
        const offset = byteOffsetOf(opts, encoding, ckIds, at);
        const msg = `${peer === 'tiktoken' ? 'MISMATCH' : 'DIFFERS'} ctxkit vs ${peer} ${key}: ` +
          `ctxkit ${ckIds.length} tokens, ${peer} ${peerIds.length}; first difference at token ${at} ` +
          `(byte offset ${offset}): ctxkit ${ckIds[at]} vs ${peer} ${peerIds[at]}`;
        problems.push(msg);
        console.log(msg);
      }
    }
  }
  console.log();

  const peerCell = (peer, key, field) => {
    const r = peerResults.get(`${peer}/${key}`);
    if (!r) return '-';
    if (r[field] !== undefined) return fmt(r[field]);
    return r.status === 'ok' ? '-' : r.status;
  };
  // A peer that timed out ran at under bytes / timeout: the ratio is then a
  // lower bound, shown as ">Nx".
  const ratioCell = (num, peer, key, field, bytes) => {
    const r = peerResults.get(`${peer}/${key}`);
    if (num === undefined || !r) return '-';
    if (r[field] !== undefined) return `${fmt(num / r[field], 2)}x`;
    if (r.status === 'timeout') return `>${fmt(num / (bytes / Number(opts.timeout) / 1e6), 0)}x`;
    return '-';
  };

  for (const encoding of encodings) {
    console.log(`== ${encoding}: encode, MB/s (ratio = ctxkit / peer; timeout = over ${opts.timeout} s) ==`);
    const header = ['input', 'bytes', 'tokens', 'ctxkit'];
    for (const p of peers) header.push(p);
    for (const p of peers) header.push(`/${p}`);
    // Whether each peer's ids were ctxkit's, id for id ('-': the peer gave
    // none, e.g. it timed out).
    for (const p of peers) header.push(`ids = ${p}`);
    const rows = [];
    for (const input of inputs) {
      const key = `${encoding}/${input.input}`;
      const ck = ctxkit.get(key) ?? {};
      const row = [input.input, input.bytes, ck.tokens ?? '-', ck.status === 'ok' ? fmt(ck.encode_mb_s) : (ck.status ?? 'missing')];
      for (const p of peers) row.push(peerCell(p, key, 'encode_mb_s'));
      for (const p of peers) row.push(ratioCell(ck.encode_mb_s, p, key, 'encode_mb_s', input.bytes));
      for (const p of peers) {
        const same = sameIds.get(`${p}/${key}`);
        row.push(same === undefined ? '-' : same ? 'yes' : 'NO');
      }
      rows.push(row);
    }
    table(header, rows);

    console.log(`== ${encoding}: count, MB/s (tiktoken and js-tiktoken: encode().length; gpt-tokenizer: countTokens) ==`);
    const cHeader = ['input', 'ctxkit'];
    for (const p of peers) cHeader.push(p);
    for (const p of peers) cHeader.push(`/${p}`);
    const cRows = [];
    for (const input of inputs) {
      const key = `${encoding}/${input.input}`;
      const ck = ctxkit.get(key) ?? {};
      const row = [input.input, ck.status === 'ok' ? fmt(ck.count_mb_s) : (ck.status ?? 'missing')];
      const field = (p) => (p.startsWith('gpt-tokenizer') ? 'count_mb_s' : 'encode_mb_s');
      for (const p of peers) row.push(peerCell(p, key, field(p)));
      for (const p of peers) row.push(ratioCell(ck.count_mb_s, p, key, field(p), input.bytes));
      cRows.push(row);
    }
    table(cHeader, cRows);

    console.log(`== ${encoding}: time of the first call on the input, ms (ctxkit: Count; peers: encode; includes any lazy set-up) ==`);
    const fHeader = ['input', 'ctxkit'];
    for (const p of peers) fHeader.push(p);
    const fRows = [];
    for (const input of inputs) {
      const key = `${encoding}/${input.input}`;
      const ck = ctxkit.get(key) ?? {};
      const row = [input.input, ck.status === 'ok' ? fmt(ck.first_count_ms) : (ck.status ?? 'missing')];
      for (const p of peers) row.push(peerCell(p, key, 'first_encode_ms'));
      fRows.push(row);
    }
    table(fHeader, fRows);
  }

  console.log('== loading an encoding in a fresh process, ms (median over the inputs\' runs) ==');
  const lRows = [];
  for (const encoding of encodings) {
    const ckLoads = inputs.map((i) => ctxkit.get(`${encoding}/${i.input}`)?.load_ms);
    const row = [encoding, fmt(median(ckLoads))];
    for (const p of peers) row.push(fmt(median(inputs.map((i) => peerResults.get(`${p}/${encoding}/${i.input}`)?.load_ms))));
    const rss = median(inputs.map((i) => ctxkit.get(`${encoding}/${i.input}`)?.load_rss_kb));
    row.push(rss === undefined ? '-' : `${rss} KiB`);
    lRows.push(row);
  }
  table(['encoding', 'ctxkit', ...peers, 'ctxkit RSS added'], lRows);

  if (problems.length) {
    console.log('== problems ==');
    for (const p of problems) console.log(p);
  } else {
    console.log('token ids: ctxkit agrees with every peer that finished, id for id.');
  }

  if (opts.json) {
    const all = { versions, inputs, ctxkit: Object.fromEntries(ctxkit), peers: Object.fromEntries(peerResults), problems };
    fs.writeFileSync(opts.json, JSON.stringify(all, null, 1));
  }
  if (opts.keep) {
    console.error(`kept ${dir}`);
  } else {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  process.exitCode = problems.some((p) => p.startsWith('MISMATCH')) ? 1 : 0;
}

main();
