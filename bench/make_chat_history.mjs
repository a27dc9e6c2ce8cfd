// Writes the body of a seed 001 `POST /api/chat/compact` request: a
// realistic 100-message agent history (a system prompt, the task, user and
// assistant turns, SQL tool calls answered by tool results with table
// rows, an error or two), about 150 bytes of text per message, in the
// style of compactor_bench.cc (SplitMix64 words, fixed seed, so every run
// sends the same bytes).
//
//   node bench/make_chat_history.mjs [--messages 100] [--max-tokens N] > body.json
//
// --max-tokens defaults to half of a rough token estimate (bytes / 4) of the
// history, so that the compactor has real work to do.

const args = process.argv.slice(2);
function option(name, fallback) {
  const i = args.indexOf(name);
  return i >= 0 && i + 1 < args.length ? Number(args[i + 1]) : fallback;
}
const count = option('--messages', 100);

let state = 0x6874747031303001n;
const mask = (1n << 64n) - 1n;
function next() {
  state = (state + 0x9e3779b97f4a7c15n) & mask;
  let z = state;
  z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & mask;
  z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & mask;
  return z ^ (z >> 31n);
}
const words = [
  'the', 'parser', 'returns', 'value', 'for', 'each', 'line', 'of', 'input',
  'and', 'then', 'we', 'check', 'module', 'config', 'loader', 'path', 'build',
  'with', 'flags', 'cache', 'layer', 'runs', 'when', 'files', 'are', 'small',
  'list', 'sorted', 'by', 'name', 'test', 'src/app/main.py', 'lib/util.cc',
  'function', 'error', 'result', 'output', 'table', 'query', 'index', 'users',
  'orders', 'select', 'update', 'schema', 'pipeline', 'stage', 'buffer',
  'offset', 'token', 'request', 'server', 'client',
];
function text(bytes) {
  let out = '';
  while (out.length < bytes) {
    if (out) out += ' ';
    out += words[Number(next() % BigInt(words.length))];
  }
  return out;
}
function between(lo, hi) {
  return lo + Number(next() % BigInt(hi - lo + 1));
}

const tables = ['users', 'orders', 'payments', 'sessions', 'events'];
const messages = [
  {role: 'system', content: 'You are a database assistant with the tools query_database and get_schema_info. ' + text(160)},
  {role: 'user', content: 'Show me the users table and find why the nightly orders report is slow. ' + text(80)},
];
let call = 0;
while (messages.length < count) {
  const left = count - messages.length;
  const turn = messages.length % 2 === 0 ? 'assistant' : 'user';
  if (turn === 'assistant' && left >= 2 && next() % 4n === 0n) {
    const id = `call_${++call}`;
    const table = tables[Number(next() % BigInt(tables.length))];
    const failed = next() % 10n === 0n;
    messages.push({
      role: 'assistant',
      content: '',
      tool_calls: [{id, type: 'function', function: {name: 'query_database',
        arguments: JSON.stringify({query: `SELECT id, name, created_at FROM ${table} WHERE ${text(20)} LIMIT 10`})}}],
    });
    messages.push({
      role: 'tool',
      tool_call_id: id,
      content: failed
          ? `ERROR: column "${text(8)}" of relation "${table}" does not exist`
          : Array.from({length: 4}, (_, i) => `${i + 1} | ${text(30)} | 2024-05-0${i + 1}`).join('\n'),
    });
    continue;
  }
  messages.push({role: turn, content: text(between(60, 220))});
}

const bytes = JSON.stringify(messages).length;
const maxTokens = option('--max-tokens', Math.max(50, Math.round(bytes / 4 / 2)));
process.stdout.write(JSON.stringify({
  messages,
  max_tokens: maxTokens,
  recent_window: 10,
  keep_anchors: true,
  options: {preserve_tool_results: true, preserve_schema_info: true,
            enable_summarization: true, token_counter_type: 'openai'},
}) + '\n');
