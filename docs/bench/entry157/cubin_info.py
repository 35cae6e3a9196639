# Per kernel of each cache entry under the folders given: SASS instructions (.text size
# / 16), registers, and local-memory frame and stack bytes (the .nv.info attributes).
# Used by entry 157 (docs/perf.md) to compare the code of compiler options.
import sys, struct, glob, os
REGCOUNT, FRAME, MINSTACK = 0x2f, 0x11, 0x12
def parse(buf):
    e = buf[buf.find(b'\x7fELF'):]
    shoff, = struct.unpack_from('<Q', e, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from('<HHH', e, 0x3a)
    secs = [struct.unpack_from('<IIQQQQIIQQ', e, shoff + i * shentsize) for i in range(shnum)]
    stro = secs[shstrndx][4]
    name = lambda off, base: e[base + off:e.index(b'\0', base + off)].decode()
    named = [(name(s[0], stro), s) for s in secs]
    symtab = [s for n, s in named if n == '.symtab'][0]
    strtab = secs[symtab[6]][4]
    syms = []
    for i in range(symtab[5] // 24):
        st_name, = struct.unpack_from('<I', e, symtab[4] + i * 24)
        syms.append(name(st_name, strtab))
    res = {}
    for n, s in named:
        if n.startswith('.text.'):
            res.setdefault(n[6:], {})['insns'] = s[5] // 16
    for n, s in named:
        if not n.startswith('.nv.info'): continue
        off, end = s[4], s[4] + s[5]
        while off < end:
            fmt, attr, size = struct.unpack_from('<BBH', e, off)
            if fmt == 0x04:
                if attr in (REGCOUNT, FRAME, MINSTACK) and size >= 8:
                    sym, val = struct.unpack_from('<II', e, off + 4)
                    key = {REGCOUNT: 'regs', FRAME: 'frame', MINSTACK: 'stack'}[attr]
                    res.setdefault(syms[sym], {})[key] = val
                off += 4 + size
            else:
                off += 4 if fmt in (0x01, 0x02, 0x03) else 4 + size
    return res
for d in sys.argv[1:]:
    for f in sorted(glob.glob(d + '/**/*.bin', recursive=True)):
        for k, v in sorted(parse(open(f, 'rb').read()).items()):
            if k.startswith('cc1d_') and 'regs' in v:
                print(f'{k} insns={v.get("insns")} regs={v.get("regs")} frame={v.get("frame", 0)} stack={v.get("stack", 0)}')
