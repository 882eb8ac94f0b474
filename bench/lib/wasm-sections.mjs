// A small WebAssembly binary reader for the size report: section sizes, function body sizes,
// and function names from the `name` custom section (present in a --profiling-funcs build).
const SECTION_NAMES = ['custom', 'type', 'import', 'function', 'table', 'memory', 'global', 'export', 'start', 'element', 'code', 'data', 'datacount'];

function reader(bytes) {
  let pos = 0;
  const r = {
    get pos() { return pos; },
    set pos(p) { pos = p; },
    byte: () => bytes[pos++],
    u32() {
      let result = 0;
      let shift = 0;
      for (;;) {
        const b = bytes[pos++];
        result += (b & 0x7f) * 2 ** shift;
        if (!(b & 0x80)) return result;
        shift += 7;
      }
    },
    name() {
      const len = r.u32();
      const s = new TextDecoder().decode(bytes.subarray(pos, pos + len));
      pos += len;
      return s;
    },
  };
  return r;
}

/** @returns {{sections: Array<{id, name, size}>, bodies: number[], importedFunctions: number, names: Map<number, string>}} */
export function parseWasm(bytes) {
  if (bytes[0] !== 0 || bytes[1] !== 0x61 || bytes[2] !== 0x73 || bytes[3] !== 0x6d) throw new Error('not a wasm binary');
  const r = reader(bytes);
  r.pos = 8;
  const sections = [];
  const bodies = [];
  const names = new Map();
  let importedFunctions = 0;
  while (r.pos < bytes.length) {
    const id = r.byte();
    const size = r.u32();
    const start = r.pos;
    let name = SECTION_NAMES[id] ?? `unknown-${id}`;
    if (id === 0) {
      const custom = r.name();
      name = `custom:${custom}`;
      if (custom === 'name') readNames(r, start + size, names);
    } else if (id === 2) {
      const count = r.u32();
      for (let i = 0; i < count; i += 1) {
        r.name();
        r.name();
        const kind = r.byte();
        if (kind === 0) { r.u32(); importedFunctions += 1; }
        else if (kind === 1) { r.byte(); limits(r); }
        else if (kind === 2) limits(r);
        else if (kind === 3) { r.byte(); r.byte(); }
        else throw new Error(`import kind ${kind}`);
      }
    } else if (id === 10) {
      const count = r.u32();
      for (let i = 0; i < count; i += 1) {
        const bodySize = r.u32();
        bodies.push(bodySize + varintLength(bodySize));
        r.pos += bodySize;
      }
    }
    sections.push({ id, name, size: size + 1 + varintLength(size) });
    r.pos = start + size;
  }
  return { sections, bodies, importedFunctions, names };
}

function limits(r) {
  const flags = r.byte();
  r.u32();
  if (flags & 1) r.u32();
}

function varintLength(n) {
  let len = 1;
  while (n >= 0x80) { n = Math.floor(n / 128); len += 1; }
  return len;
}

function readNames(r, end, names) {
  while (r.pos < end) {
    const sub = r.byte();
    const size = r.u32();
    const next = r.pos + size;
    if (sub === 1) {
      const count = r.u32();
      for (let i = 0; i < count; i += 1) {
        const index = r.u32();
        names.set(index, r.name());
      }
    }
    r.pos = next;
  }
}

/** The qualified name of a demangled C++ function, without return type, templates and parameters. */
export function qualifiedName(demangled) {
  let s = demangled.replace(/\(anonymous namespace\)/g, 'anon').replace(/operator(\(\)|<<=?|>>=?|<=>?|>=|<|>|->\*?|\[\]|==|!=|[+\-*/%^&|~!=]=?|\s+new(\[\])?|\s+delete(\[\])?)/g, 'operatorX');
  let depth = 0;
  let cut = s.length;
  for (let i = 0; i < s.length; i += 1) {
    const c = s[i];
    if (c === '<') depth += 1;
    else if (c === '>') depth -= 1;
    else if (c === '(' && depth === 0) { cut = i; break; }
  }
  s = s.slice(0, cut);
  // The last top-level space separates the return type from the name.
  depth = 0;
  let start = 0;
  for (let i = 0; i < s.length; i += 1) {
    const c = s[i];
    if (c === '<') depth += 1;
    else if (c === '>') depth -= 1;
    else if (c === ' ' && depth === 0) start = i + 1;
  }
  s = s.slice(start);
  // Drop template arguments.
  let out = '';
  depth = 0;
  for (const c of s) {
    if (c === '<') depth += 1;
    else if (c === '>') depth -= 1;
    else if (depth === 0) out += c;
  }
  return out;
}

/** Where a function's code comes from, by its name (first matching rule wins). */
export const CODE_GROUPS = [
  ['embind runtime and bindings glue (emscripten::, _embind_*, _emval_*)', (q, n) => /^emscripten::|^_embind|^_emval|^__embind|^__getTypeName|^embind_/.test(q) || /^_?_?embind|^_emval/.test(n)],
  ['the boundary (boundary.cc, bindings.cc; the core\'s step is inlined into baton_step by LTO)', (q) => /^baton::boundary::|^baton_step$|^__wrap_siprintf$/.test(q)],
  ['core: wire codec (baton::wire)', (q) => /^baton::wire::/.test(q)],
  ['core: state machine (baton::Election)', (q) => /^baton::Election::/.test(q)],
  ['core: presence, policy, types, fence', (q) => /^baton::/.test(q)],
  ['libc++ (std::string, vector, map, deque, operator new)', (q) => /^std::|^operatorX/.test(q)],
  ['malloc / free (emmalloc)', (q) => /^(malloc|free|sbrk|emscripten_builtin|realloc|calloc|claim_more_memory|attempt_allocate|emmalloc|posix_memalign|aligned_alloc|memalign)/.test(q)],
  ['libc printf family (snprintf: printf_core, fmt_fp, ...)', (q) => /^(printf_core|fmt_|pad|out|getint|pop_arg|vsnprintf|snprintf|vfprintf|sn_write|__towrite|wctomb|__fwritex|frexp|__signbit|__fpclassify|vsniprintf|siprintf)/.test(q)],
  ['libc (memcpy, memset, strlen, ...)', (q) => /^(_?_?mem|str|abort|__|emscripten_|sqrt|floor|ceil|fmod|stack)/.test(q)],
];

export function groupCode(parsed, groups = CODE_GROUPS) {
  const totals = new Map(groups.map(([label]) => [label, { bytes: 0, functions: 0 }]));
  totals.set('other', { bytes: 0, functions: 0 });
  const all = [];
  parsed.bodies.forEach((bytes, i) => {
    const name = parsed.names.get(parsed.importedFunctions + i) ?? '';
    const q = qualifiedName(name);
    const group = groups.find(([, test]) => test(q, name))?.[0] ?? 'other';
    const t = totals.get(group);
    t.bytes += bytes;
    t.functions += 1;
    all.push({ name: q, bytes, group });
  });
  all.sort((a, b) => b.bytes - a.bytes);
  const other = all.filter((f) => f.group === 'other').map((f) => f.name);
  return { totals: [...totals].map(([label, t]) => ({ label, ...t })).filter((t) => t.functions > 0), biggest: all.slice(0, 12), other };
}
