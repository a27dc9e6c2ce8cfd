// Regenerates every built-in vocabulary under lib/tokenizer/data/ byte for
// byte from the npm packages that publish them.
//
//   mkdir -p /tmp/ctxkit-npm-vocab && cd /tmp/ctxkit-npm-vocab
//   npm install --no-save gpt-tokenizer@4.0.0 tiktoken@1.0.22 \
//       js-tiktoken@1.0.21 @anthropic-ai/tokenizer@0.0.4
//   node <repo>/lib/tokenizer/data/generate_vocabularies.mjs \
//       /tmp/ctxkit-npm-vocab/node_modules [output dir]
//
// The output directory defaults to the directory of this script. Only Node's
// standard library is used. The script refuses other package versions, checks
// the OpenAI token lists against the sha256 that tiktoken publishes for each
// .tiktoken file, and cross-checks the three npm copies of them, so a
// regenerated file is either identical to the committed one or the script
// fails. Sources (licences in NOTICE at the repository root):
//   - token bytes and ranks of r50k_base, p50k_base, cl100k_base, o200k_base:
//     gpt-tokenizer/data/<name>.tiktoken, cross-checked against
//     tiktoken/encoders/<name>.json and js-tiktoken/dist/ranks/<name>.js;
//   - their pattern, special tokens and explicit_n_vocab: tiktoken/registry.json;
//   - the legacy Claude vocabulary, its pattern, special tokens and
//     explicit_n_vocab: @anthropic-ai/tokenizer/claude.json.
//
// File format (".ctxvocab", version 1), read by Vocabulary::FromCompact in
// lib/tokenizer/vocabulary.cc, which documents the same layout:
//   header, 20 bytes:
//     "CTXVOCAB"                   8 bytes, magic
//     version                      u32 little-endian, 1
//     payload size                 u32 little-endian, bytes after the header
//     payload checksum             u32 little-endian, CompactChecksum below
//   payload (every "varint" is unsigned LEB128, minimal, at most 5 bytes):
//     token count                  varint
//     explicit_n_vocab + 1         varint, 0 when the source gives none
//     pattern                      varint length, UTF-8 bytes
//     special token count          varint, then per special token in rank
//                                  order: varint length, bytes, varint rank
//     run count                    varint, then per run of consecutive ranks:
//                                  varint gap (first rank minus the end of the
//                                  previous run, which starts at 0), varint
//                                  count (>= 1)
//     token lengths                one varint per token, in rank order
//     token bytes                  all tokens concatenated in rank order,
//                                  up to the end of the payload

import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const kPackages = {
  'gpt-tokenizer': '4.0.0',
  'tiktoken': '1.0.22',
  'js-tiktoken': '1.0.21',
  '@anthropic-ai/tokenizer': '0.0.4',
};

// The sha256 of each .tiktoken file as published by tiktoken (openai_public.py).
const kOpenAi = {
  r50k_base: '306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930',
  p50k_base: '94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069',
  cl100k_base: '223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7',
  o200k_base: '446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d',
};

function fail(message) {
  console.error(`generate_vocabularies: ${message}`);
  process.exit(1);
}

// Must match CompactChecksum() in lib/tokenizer/vocabulary.cc: 32-bit words,
// little-endian, the last one zero-padded; every step is a bijection of the
// state, so any change to a single word always changes the result.
function compactChecksum(bytes) {
  let h = (0x811c9dc5 ^ bytes.length) >>> 0;
  for (let i = 0; i < bytes.length; i += 4) {
    const w = (bytes[i] | ((bytes[i + 1] ?? 0) << 8) |
               ((bytes[i + 2] ?? 0) << 16) | ((bytes[i + 3] ?? 0) << 24)) >>> 0;
    const x = (h ^ w) >>> 0;
    h = Math.imul(((x << 13) | (x >>> 19)) >>> 0, 0x9e3779b1) >>> 0;
  }
  h = (h ^ (h >>> 16)) >>> 0;
  h = Math.imul(h, 0x85ebca6b) >>> 0;
  h = (h ^ (h >>> 13)) >>> 0;
  return h;
}

class Writer {
  constructor() { this.parts = []; }
  varint(value) {
    if (!Number.isInteger(value) || value < 0 || value > 0xffffffff) {
      fail(`varint out of range: ${value}`);
    }
    const out = [];
    do {
      let b = value % 128;
      value = Math.floor(value / 128);
      if (value > 0) b |= 0x80;
      out.push(b);
    } while (value > 0);
    this.parts.push(Buffer.from(out));
  }
  bytes(buffer) { this.parts.push(Buffer.from(buffer)); }
  text(string) {
    const b = Buffer.from(string, 'utf8');
    this.varint(b.length);
    this.bytes(b);
  }
  result() { return Buffer.concat(this.parts); }
}

// tokens: Map rank -> Buffer. specials: object text -> rank.
function encodeCompact({ tokens, pattern, specials, explicitNVocab }) {
  const ranks = [...tokens.keys()].sort((a, b) => a - b);
  const w = new Writer();
  w.varint(ranks.length);
  w.varint(explicitNVocab === undefined ? 0 : explicitNVocab + 1);
  w.text(pattern);
  const specialEntries = Object.entries(specials).sort((a, b) => a[1] - b[1]);
  w.varint(specialEntries.length);
  for (const [text, rank] of specialEntries) {
    w.text(text);
    w.varint(rank);
  }
  const runs = [];
  for (const rank of ranks) {
    const last = runs[runs.length - 1];
    if (last && last.start + last.count === rank) {
      last.count++;
    } else {
      runs.push({ start: rank, count: 1 });
    }
  }
  w.varint(runs.length);
  let end = 0;
  for (const run of runs) {
    w.varint(run.start - end);
    w.varint(run.count);
    end = run.start + run.count;
  }
  for (const rank of ranks) w.varint(tokens.get(rank).length);
  for (const rank of ranks) w.bytes(tokens.get(rank));
  const payload = w.result();
  const header = Buffer.alloc(20);
  header.write('CTXVOCAB', 0, 'latin1');
  header.writeUInt32LE(1, 8);
  header.writeUInt32LE(payload.length, 12);
  header.writeUInt32LE(compactChecksum(payload), 16);
  return Buffer.concat([header, payload]);
}

// Strict standard base64 with padding, as in .tiktoken files.
function decodeBase64(text, where) {
  if (!/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(text) ||
      text.length === 0) {
    fail(`${where}: bad base64 ${JSON.stringify(text)}`);
  }
  const bytes = Buffer.from(text, 'base64');
  if (bytes.toString('base64') !== text) fail(`${where}: non-canonical base64`);
  return bytes;
}

function parseTiktoken(text, where) {
  const tokens = new Map();
  const seen = new Set();
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  lines.forEach((line, i) => {
    const m = /^(\S+) (\d+)$/.exec(line);
    if (!m) fail(`${where}:${i + 1}: malformed line`);
    const rank = Number(m[2]);
    if (tokens.has(rank)) fail(`${where}:${i + 1}: duplicate rank ${rank}`);
    if (seen.has(m[1])) fail(`${where}:${i + 1}: duplicate token`);
    seen.add(m[1]);
    tokens.set(rank, decodeBase64(m[1], `${where}:${i + 1}`));
  });
  return tokens;
}

// tiktoken's JS packages store ranks as lines "! <first rank> <b64> <b64> ...",
// the tokens of a line taking consecutive ranks.
function parseTiktokenLite(bpeRanks, where) {
  const tokens = new Map();
  for (const line of bpeRanks.split('\n')) {
    if (line === '') continue;
    const [bang, offset, ...items] = line.split(' ');
    if (bang !== '!' || !/^\d+$/.test(offset)) fail(`${where}: bad bpe_ranks line`);
    items.forEach((item, i) => {
      const rank = Number(offset) + i;
      if (tokens.has(rank)) fail(`${where}: duplicate rank ${rank}`);
      tokens.set(rank, decodeBase64(item, `${where} rank ${rank}`));
    });
  }
  return tokens;
}

function sameTokens(a, b) {
  if (a.size !== b.size) return false;
  for (const [rank, bytes] of a) {
    const other = b.get(rank);
    if (!other || !other.equals(bytes)) return false;
  }
  return true;
}

function checkUniqueBytes(tokens, where) {
  const seen = new Set();
  for (const bytes of tokens.values()) {
    const key = bytes.toString('latin1');
    if (seen.has(key)) fail(`${where}: two ranks share the same bytes`);
    seen.add(key);
  }
}

async function main() {
  const [modules, outArg] = process.argv.slice(2);
  if (!modules) {
    fail('usage: node generate_vocabularies.mjs <node_modules dir> [output dir]');
  }
  const outDir = outArg ?? dirname(fileURLToPath(import.meta.url));
  for (const [name, version] of Object.entries(kPackages)) {
    const pkg = JSON.parse(readFileSync(join(modules, name, 'package.json'), 'utf8'));
    if (pkg.version !== version) {
      fail(`${name} is ${pkg.version}, this script needs exactly ${version}`);
    }
  }
  const registry = JSON.parse(
      readFileSync(join(modules, 'tiktoken', 'registry.json'), 'utf8'));

  const outputs = [];
  for (const [name, sha256] of Object.entries(kOpenAi)) {
    const file = readFileSync(join(modules, 'gpt-tokenizer', 'data', `${name}.tiktoken`));
    const digest = createHash('sha256').update(file).digest('hex');
    if (digest !== sha256) fail(`${name}.tiktoken has sha256 ${digest}, want ${sha256}`);
    const tokens = parseTiktoken(file.toString('latin1'), `${name}.tiktoken`);
    checkUniqueBytes(tokens, name);

    const encoder = JSON.parse(readFileSync(
        join(modules, 'tiktoken', 'encoders', `${name}.json`), 'utf8'));
    if (!sameTokens(tokens, parseTiktokenLite(encoder.bpe_ranks, `tiktoken ${name}`))) {
      fail(`${name}: tiktoken/encoders/${name}.json disagrees with gpt-tokenizer`);
    }
    const js = (await import(pathToFileURL(
        join(modules, 'js-tiktoken', 'dist', 'ranks', `${name}.js`)).href)).default;
    if (!sameTokens(tokens, parseTiktokenLite(js.bpe_ranks, `js-tiktoken ${name}`))) {
      fail(`${name}: js-tiktoken disagrees with gpt-tokenizer`);
    }
    const entry = registry[name];
    if (!entry) fail(`tiktoken/registry.json has no ${name}`);
    if (entry.pat_str !== encoder.pat_str ||
        JSON.stringify(entry.special_tokens) !== JSON.stringify(encoder.special_tokens)) {
      fail(`${name}: tiktoken's registry.json and encoders/${name}.json disagree`);
    }
    outputs.push({
      name,
      data: encodeCompact({
        tokens,
        pattern: entry.pat_str,
        specials: entry.special_tokens,
        explicitNVocab: entry.explicit_n_vocab,
      }),
    });
  }

  const claude = JSON.parse(readFileSync(
      join(modules, '@anthropic-ai', 'tokenizer', 'claude.json'), 'utf8'));
  const claudeTokens = parseTiktokenLite(claude.bpe_ranks, 'claude.json');
  checkUniqueBytes(claudeTokens, 'claude');
  outputs.push({
    name: 'claude',
    data: encodeCompact({
      tokens: claudeTokens,
      pattern: claude.pat_str,
      specials: claude.special_tokens,
      explicitNVocab: claude.explicit_n_vocab,
    }),
  });

  for (const { name, data } of outputs) {
    const path = join(outDir, `${name}.ctxvocab`);
    writeFileSync(path, data);
    const digest = createHash('sha256').update(data).digest('hex');
    console.log(`${path}: ${data.length} bytes, sha256 ${digest}`);
  }
}

await main();
