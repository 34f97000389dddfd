// The `.note.gnu.property` of a host object: the control-flow protection it is compatible with.
//
// A linker ANDs these feature bits over every input object: one object without the note turns
// x86_64's IBT and SHSTK (CET; `gcc -fcf-protection`) or AArch64's BTI and PAC
// (`-mbranch-protection=standard`) off for the whole program, silently unless asked to report
// (`ld -z cet-report=error`, `-z force-bti`). The packaged object holds data only, no code: no
// indirect branch lands in it and no return leaves it, so it is compatible with every one of these
// features, and says so. (The gABI's x86 ISA-needed properties are left out: data needs no ISA.)
//
// Layout (System V gABI note; the property array of the Linux Extensions to gABI), ELF64:
//   u32 namesz = 4, u32 descsz, u32 type = NT_GNU_PROPERTY_TYPE_0, "GNU\0",
//   desc: one property { u32 pr_type, u32 pr_datasz = 4, u32 feature bits, u32 padding to 8 }
import { SHT_NOTE } from './constants.js'
import type { HostArch } from './package.js'

export { SHT_NOTE }
export const NT_GNU_PROPERTY_TYPE_0 = 5
export const GNU_PROPERTY_X86_FEATURE_1_AND = 0xc000_0002
export const GNU_PROPERTY_X86_FEATURE_1_IBT = 0x1
export const GNU_PROPERTY_X86_FEATURE_1_SHSTK = 0x2
export const GNU_PROPERTY_AARCH64_FEATURE_1_AND = 0xc000_0000
export const GNU_PROPERTY_AARCH64_FEATURE_1_BTI = 0x1
export const GNU_PROPERTY_AARCH64_FEATURE_1_PAC = 0x2

/** The one property each host gets: its FEATURE_1_AND with every bit a data-only object allows. */
const FEATURES: Readonly<Record<HostArch, readonly [type: number, bits: number]>> = Object.freeze({
  x86_64: [GNU_PROPERTY_X86_FEATURE_1_AND, GNU_PROPERTY_X86_FEATURE_1_IBT | GNU_PROPERTY_X86_FEATURE_1_SHSTK],
  aarch64: [GNU_PROPERTY_AARCH64_FEATURE_1_AND, GNU_PROPERTY_AARCH64_FEATURE_1_BTI | GNU_PROPERTY_AARCH64_FEATURE_1_PAC],
})

/** The contents of `.note.gnu.property` for `hostArch` (SHT_NOTE, SHF_ALLOC, 8-aligned). */
export function gnuPropertyNote(hostArch: HostArch): Buffer {
  const [type, bits] = FEATURES[hostArch]
  const note = Buffer.alloc(16 + 16)
  note.writeUInt32LE(4, 0) // namesz: "GNU\0"
  note.writeUInt32LE(16, 4) // descsz: one 4-byte property, padded to 8, after its 8-byte header
  note.writeUInt32LE(NT_GNU_PROPERTY_TYPE_0, 8)
  note.write('GNU\0', 12, 'latin1')
  note.writeUInt32LE(type, 16)
  note.writeUInt32LE(4, 20) // pr_datasz
  note.writeUInt32LE(bits, 24) // the 4 bytes after it stay zero: padding to 8
  return note
}
