// The --svg figure: well-formed XML whatever the command names and values (checked by a strict
// parser here, and by python3's xml.etree through the harness when python3 is installed), both
// panels with labelled axes and units, every command's name beside its own row, every run drawn.
import t from 'tap'
import { spawnChildSync } from '../../lib/index.js'
import { benchSvg, escapeXml, niceTicks } from '../../lib/bench/svg.js'
import { report } from './helpers.js'

// ----- a strict XML 1.0 well-formedness check (no DTDs: an SVG from us never has one) ----------

const NAME = /^[A-Za-z_:][-A-Za-z0-9_:.]*/
const XML_CHAR = /^[\t\n\r\u0020-\ud7ff\ue000-\ufffd\u{10000}-\u{10ffff}]*$/u

function checkText(text: string, where: string): void {
  if (!XML_CHAR.test(text)) throw new Error(`character not allowed in XML in ${where}`)
  const amp = /&([^;]*);?/g
  for (let m; (m = amp.exec(text));) {
    if (!m[0].endsWith(';') || !/^(amp|lt|gt|quot|apos|#\d+|#x[0-9a-fA-F]+)$/.test(m[1])) throw new Error(`bad entity reference '${m[0]}' in ${where}`)
  }
}

/** Throws with a reason unless `xml` is one well-formed document. */
function checkWellFormed(xml: string): void {
  let i = 0
  const stack: string[] = []
  let rootSeen = false
  if (xml.startsWith('<?xml')) {
    const end = xml.indexOf('?>')
    if (end < 0) throw new Error('unterminated XML declaration')
    i = end + 2
  }
  while (i < xml.length) {
    const lt = xml.indexOf('<', i)
    const text = xml.slice(i, lt < 0 ? xml.length : lt)
    if (stack.length === 0 && text.trim() !== '') throw new Error(`text outside the root element at ${i}`)
    checkText(text, `text at ${i}`)
    if (text.includes('>') && text.includes(']]>')) throw new Error(`']]>' in text at ${i}`)
    if (lt < 0) break
    i = lt
    if (xml.startsWith('<!--', i)) {
      const end = xml.indexOf('-->', i + 4)
      if (end < 0 || xml.slice(i + 4, end).includes('--')) throw new Error(`bad comment at ${i}`)
      i = end + 3
      continue
    }
    if (xml.startsWith('<?', i)) {
      const end = xml.indexOf('?>', i)
      if (end < 0) throw new Error(`unterminated processing instruction at ${i}`)
      i = end + 2
      continue
    }
    if (xml.startsWith('<!', i)) throw new Error(`unexpected markup declaration at ${i}`)
    if (xml.startsWith('</', i)) {
      const m = NAME.exec(xml.slice(i + 2))
      if (!m) throw new Error(`bad end tag at ${i}`)
      const close = xml.indexOf('>', i)
      if (xml.slice(i + 2 + m[0].length, close).trim() !== '') throw new Error(`junk in end tag at ${i}`)
      const open = stack.pop()
      if (open !== m[0]) throw new Error(`</${m[0]}> closes <${open}> at ${i}`)
      i = close + 1
      continue
    }
    // A start tag: name, attributes, optional '/'.
    const m = NAME.exec(xml.slice(i + 1))
    if (!m) throw new Error(`bad start tag at ${i}`)
    if (stack.length === 0 && rootSeen) throw new Error(`second root element at ${i}`)
    let j = i + 1 + m[0].length
    const seen = new Set<string>()
    for (;;) {
      const ws = /^\s*/.exec(xml.slice(j))![0].length
      j += ws
      if (xml.startsWith('/>', j)) { j += 2; if (stack.length === 0) rootSeen = true; break }
      if (xml[j] === '>') { j += 1; stack.push(m[0]); rootSeen = true; break }
      if (ws === 0) throw new Error(`no space before attribute at ${j}`)
      const a = NAME.exec(xml.slice(j))
      if (!a) throw new Error(`bad attribute at ${j}`)
      if (seen.has(a[0])) throw new Error(`duplicate attribute ${a[0]} at ${j}`)
      seen.add(a[0])
      j += a[0].length
      const eq = /^\s*=\s*(["'])/.exec(xml.slice(j))
      if (!eq) throw new Error(`attribute ${a[0]} without a quoted value at ${j}`)
      j += eq[0].length
      const end = xml.indexOf(eq[1], j)
      if (end < 0) throw new Error(`unterminated attribute value at ${j}`)
      const value = xml.slice(j, end)
      if (value.includes('<')) throw new Error(`'<' in attribute value at ${j}`)
      checkText(value, `attribute ${a[0]} at ${j}`)
      j = end + 1
    }
    i = j
  }
  if (stack.length) throw new Error(`unclosed <${stack.join('>, <')}>`)
  if (!rootSeen) throw new Error('no root element')
}

const python = spawnChildSync({ file: 'sh', args: ['-c', 'command -v python3'], stdout: 'pipe' }).exitCode === 0

/** python3's expat parser on `xml`; null when it parses, else its message. */
function pythonXmlError(xml: string): string | null {
  const r = spawnChildSync({
    file: 'python3', args: ['-c', 'import sys, xml.etree.ElementTree as E; E.fromstring(sys.stdin.buffer.read())'],
    input: xml, stdout: 'pipe', stderr: 'pipe', timeout: 30000,
  })
  return r.exitCode === 0 ? null : r.stderr.toString().trim().split('\n').pop() ?? r.diagnostic
}

t.test('the checker itself rejects what is not well-formed', async t => {
  const bad = [
    '<a><b></a></b>', '<a>', '<a/><b/>', '<a x="1" x="2"/>', '<a x=1/>', '<a>&bogus;</a>', '<a>AT&T</a>',
    '<a>1 < 2</a>', '<a x="<"/>', 'text<a/>', '<a>\u0001</a>', '<a><!-- a -- b --></a>', '',
  ]
  for (const xml of bad) t.throws(() => checkWellFormed(xml), JSON.stringify(xml))
  for (const xml of ['<a/>', '<?xml version="1.0"?>\n<a x=\'1\' y="&amp;&#38;&#x26;"><b/>text &lt; &gt;<!-- c --></a>\n']) {
    t.doesNotThrow(() => checkWellFormed(xml), JSON.stringify(xml))
  }
})

const NASTY = [
  `sh -c 'echo "<b>&amp;" > /dev/null'`,
  'a\u0001b\u001fc',
  'ünïcödé — ✓ 𝄞',
  `x${'y'.repeat(200)}`,
  "it's \"quoted\" & <tagged>",
]

t.test('well-formed whatever the command names and values', async t => {
  const cases: Array<[string, Array<[string, number[], number[]]>]> = [
    ['nasty names', NASTY.map((name, i) => [name, [1 + i, 2 + i, 3 + i, 40 + i], [1000, 1100, 1200, 5000]])],
    ['one run each', [['a', [5], [800]], ['b', [7], [900]]]],
    ['identical values', [['same', [3, 3, 3], [1024, 1024, 1024]]]],
    ['zeros', [['zero', [0, 0, 0], [0, 0, 0]]]],
    ['wide spread (log axis)', [['spread', [0.2, 0.3, 50, 400], [10, 20, 3e6, 4e6]]]],
    ['seconds and GiB', [['slow', [1500, 2500, 2000], [2 * 1024 ** 2, 3 * 1024 ** 2, 2.5 * 1024 ** 2]]]],
  ]
  for (const [what, commands] of cases) {
    const svg = benchSvg(report(commands))
    t.doesNotThrow(() => checkWellFormed(svg), `${what}: strict check`)
    if (python) t.equal(pythonXmlError(svg), null, `${what}: python3 xml.etree`)
    t.notMatch(svg, /NaN|Infinity|undefined/, `${what}: no NaN, Infinity or undefined`)
  }
  if (!python) t.comment('python3 not found: the strict checker alone was used')
})

t.test('both panels, units on the axes, names beside their rows, every run drawn', async t => {
  const svg = benchSvg(report([['/bin/true', [0.5, 0.6, 0.7, 0.55], [900, 950, 1000, 980]], ['sh -c true', [1.1, 1.2, 1.3, 5], [1500, 1550, 1600, 1580]]]))
  t.match(svg, /<text[^>]*class="panel">Wall time<\/text>/)
  t.match(svg, /<text[^>]*class="panel">Max RSS<\/text>/)
  t.match(svg, />wall time \(ms\)</, 'time axis labelled with its unit')
  t.match(svg, />max RSS \((KiB|MiB)\)/, 'memory axis labelled with its unit')
  t.equal(svg.match(/class="name">\/bin\/true</g)?.length, 2, 'the name beside its row in each panel')
  t.equal(svg.match(/class="name">sh -c true</g)?.length, 2)
  t.equal(svg.match(/<circle /g)?.length, 2 * 2 * 4, 'one dot per run, per command, per panel')
  t.match(svg, /r="3.5" fill="#fff"/, 'the 5 ms run is drawn hollow, an outlier')
  t.match(svg, /Tukey/, 'the outlier rule is stated')
  t.match(svg, /^<\?xml version="1.0" encoding="UTF-8"\?>\n<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/)
})

t.test('niceTicks and escapeXml', async t => {
  t.same(niceTicks(0, 8.3), { lo: 0, hi: 10, step: 2, ticks: [0, 2, 4, 6, 8, 10] })
  t.same(niceTicks(0, 1).ticks, [0, 0.2, 0.4, 0.6, 0.8, 1])
  t.same(niceTicks(0.8, 1.6).ticks, [0.8, 1, 1.2, 1.4, 1.6])
  const flat = niceTicks(3, 3)
  t.ok(flat.lo < 3 && flat.hi > 3, 'a flat range is widened')
  t.equal(escapeXml(`<a href="x">'&'</a>\u0000`), '&lt;a href=&quot;x&quot;&gt;&apos;&amp;&apos;&lt;/a&gt;\ufffd')
})
