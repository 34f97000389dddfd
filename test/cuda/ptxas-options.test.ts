// The ptxas options a caller passes through: split, checked against the harness's own options and
// against what the ptxas to be run lists in its --help (a probe: an excerpt's, and the real one's).
import t from 'tap'
import { makeProbe, parsePtxasHelp, probePtxas, type PtxasProbe } from '../../lib/cuda/probe.js'
import { checkPtxasOptions, ptxasOptionTokens } from '../../lib/cuda/ptxas-options.js'
import { skipWithoutPtxas } from '../fixtures/cuda/helpers.js'

// Options of ptxas 13.0's --help, in its shapes.
const EXCERPT = makeProbe({
  path: '/opt/cuda/bin/ptxas', version: '13.0.88', release: '13.0', versionText: '', ptxIsaVersions: ['9.0'],
  options: parsePtxasHelp([
    '--compile-only                                      (-c)',
    '--entry <entry function>,...                        (-e)',
    '--machine <bits>                                    (-m)',
    '--output-file <file>                                (-o)',
    '--gpu-name <gpu name>                               (-arch)',
    '--maxrregcount <archmax/archmin/N>                  (-maxrregcount)',
    '--opt-level <N>                                     (-O)',
    '--options-file <file>,...                           (-optf)',
    '--opt-fp-atomics                                    (-opt-fp-atomics)',
    '--verbose                                           (-v)',
    '--warn-on-spills                                    (-warn-spills)',
  ].join('\n')),
})

/** [what, tokens, null when taken, else the message's tail after `ptxasOptions `]. */
type Row = [string, string[], string | null]
const rows: Row[] = [
  ['nothing', [], null],
  ['switches', ['-v', '--warn-on-spills'], null],
  ['a value as the next token', ['--maxrregcount', '32', '-v'], null],
  ['a value glued with =', ['--maxrregcount=32'], null],
  ['a short option with its value', ['-maxrregcount', '40'], null],
  ['an option that merely starts like -o', ['-opt-fp-atomics'], null],
  ['the target', ['-arch', 'sm_90'], 'has "-arch", an option tileharness sets itself: use gpuName (--gpu-name)'],
  ['the target, long', ['--gpu-name=sm_90'], 'has "--gpu-name=sm_90", an option tileharness sets itself: use gpuName (--gpu-name)'],
  ['the opt level, glued', ['-O2'], 'has "-O2", an option tileharness sets itself: use optLevel (-O)'],
  ['the output', ['-o', 'x.cubin'], 'has "-o", an option tileharness sets itself: use the output (tileharness reads the cubin from ptxas\'s stdout)'],
  // ptxas 13.0 takes a glued value only after -O and -m: -ox.cubin, -opt-level=1 and -entry=vadd
  // are options of those names to it ("Unknown option"), so they are no option of its here either.
  ['the output, glued (no ptxas spelling)', ['-ox.cubin'], 'has "-ox.cubin", which is not an option of /opt/cuda/bin/ptxas (ptxas 13.0.88); see ptxas --help'],
  ['the opt level, one dash (no ptxas spelling)', ['-opt-level=1'], 'has "-opt-level=1", which is not an option of /opt/cuda/bin/ptxas (ptxas 13.0.88); see ptxas --help'],
  ['the entry, one dash (no ptxas spelling)', ['-entry=vadd'], 'has "-entry=vadd", which is not an option of /opt/cuda/bin/ptxas (ptxas 13.0.88); see ptxas --help'],
  ['the entry, glued (no ptxas spelling)', ['-evadd'], 'has "-evadd", which is not an option of /opt/cuda/bin/ptxas (ptxas 13.0.88); see ptxas --help'],
  ['the entry with its value', ['-e', 'vadd'], null],
  ['the machine, glued', ['-m64'], null],
  ['relocatable', ['-c'], 'has "-c", an option tileharness sets itself: use relocatable (--relocatable-device-code, -c)'],
  ['debug', ['-g'], 'has "-g", an option tileharness sets itself: use deviceDebug (--device-debug)'],
  ['an options file', ['-optf', 'more.txt'], 'has "-optf", an option tileharness sets itself: use the options themselves'],
  ['a listing option', ['--version'], 'has "--version", an option tileharness sets itself: use nothing: it prints and writes no cubin'],
  ['unknown', ['--fancy'], 'has "--fancy", which is not an option of /opt/cuda/bin/ptxas (ptxas 13.0.88); see ptxas --help'],
  ['a long name with one dash', ['-warn-on-spills'], 'has "-warn-on-spills", which is not an option of /opt/cuda/bin/ptxas (ptxas 13.0.88); see ptxas --help'],
  ['a value without its option', ['32'], 'has "32" where an option belongs: ptxas would take it for an input file'],
  ['a missing value', ['-v', '--maxrregcount'], 'has "--maxrregcount" without its value <archmax/archmin/N>'],
  ['a lone dash', ['-'], 'has "-" where an option belongs: ptxas would take it for an input file'],
]

/** null when taken (and returned unchanged), else the message after the field; any other error is a failure. */
function check(tokens: string[], probe: PtxasProbe | null): string | null {
  try {
    return checkPtxasOptions('ptxasOptions', tokens, probe) === tokens ? null : 'changed the tokens'
  } catch (error) {
    const { code, field } = error as { code?: string; field?: string }
    if (!(error instanceof TypeError) || code !== 'ERR_INVALID_ARG_VALUE' || field !== 'ptxasOptions') return `unexpected ${String(error)}`
    return error.message.replace(/^ptxasOptions /, '')
  }
}

t.test('checked against the harness\'s options and the probe\'s', async (t) => {
  for (const [what, tokens, message] of rows) t.equal(check(tokens, EXCERPT), message, what)
})

t.test('without a ptxas that answers: only the harness\'s own options are refused', async (t) => {
  t.equal(check(['--fancy', '-v'], null), null, 'an unknown option goes to ptxas, which will say')
  t.match(check(['-arch', 'sm_90'], null), /an option tileharness sets itself/)
  t.match(check(['-O3'], null), /use optLevel/)
})

t.test('against the real ptxas', skipWithoutPtxas, async (t) => {
  const probe = probePtxas()
  for (const [what, tokens, message] of rows) {
    if (what === 'an option that merely starts like -o' || what === 'a short option with its value') continue
    t.equal(check(tokens, probe), message?.replace('/opt/cuda/bin/ptxas (ptxas 13.0.88)', `${probe!.path} (ptxas ${probe!.version})`) ?? null, what)
  }
  t.equal(check(['--maxrregcount', '32', '--warn-on-spills', '-v', '--extensible-whole-program'], probe), null, 'real options')
})

t.test('tokens: an array as it is, a string split as a shell would', async (t) => {
  t.same(ptxasOptionTokens('ptxasOptions', "--maxrregcount 32  -v '--def-load-cache=ca'"), ['--maxrregcount', '32', '-v', '--def-load-cache=ca'])
  t.same(ptxasOptionTokens('ptxasOptions', ['-v', 'a b']), ['-v', 'a b'])
  t.throws(() => ptxasOptionTokens('ptxasOptions', 3), { code: 'ERR_INVALID_ARG_TYPE', field: 'ptxasOptions' })
  t.throws(() => ptxasOptionTokens('ptxasOptions', ['-v', 3]), { code: 'ERR_INVALID_ARG_TYPE', field: 'ptxasOptions' })
  t.throws(() => ptxasOptionTokens('ptxasOptions', ['-v\0']), { field: 'ptxasOptions' })
})
