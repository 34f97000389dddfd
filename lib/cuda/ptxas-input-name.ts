// The name ptxas's messages give the input. ptxas prefixes a message about a line of its input
// with where it read that input: `ptxas <location>, line <N>; <severity> : <text>`. The location is
// never the user's file here: `application ptx input` on the argv route (--input-as-string),
// `/dev/fd/0` on the memfd route, the path of a temp file already deleted on the file route. So
// the one rewrite tileharness makes of ptxas's stderr (docs/toolchain-contract.md, "The ptxas
// child") is that location, in that prefix, at the start of a line: it becomes the name the caller
// gives (the user's file, `<stdin>`), and the message reads as ptxas's own does when it is handed
// that file by path. The line number, the severity and the text stay ptxas's, byte for byte.

import { requireString } from '../errors.js'

/** ptxas 13.0's name for an input given with --input-as-string. */
export const PTXAS_ARGV_INPUT = 'application ptx input'

/** `diagnostics` with each line's `ptxas <location>, line N;` prefix naming `name` instead. */
export function renamePtxasInput(diagnostics: string, location: string, name: string): string {
  requireString('diagnostics', diagnostics)
  requireString('location', location)
  requireString('name', name)
  if (location === name || diagnostics === '') return diagnostics
  const prefix = new RegExp(`^ptxas ${escapeRegExp(location)}, line (\\d+);`, 'gm')
  return diagnostics.replace(prefix, (_, line: string) => `ptxas ${name}, line ${line};`)
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')
}
