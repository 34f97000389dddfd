// The fatbinary argv, every token of it built here and only here:
//
//   fatbinary --create=/dev/stdout -64 --compress=false [--device-c]
//             --image3=kind=elf,sm=<NN[a|f]>,file=<cubin>   one per target, in the caller's order
//             [--image3=kind=ptx,sm=<NN[a|f]>,file=<ptx>]   with the PTX for the driver to JIT
//
// /dev/stdout: the fat binary comes back on the stdout pipe, as ptxas's cubin does, so there is no
// output file to clean up. --compress=false: fatbinary 13.0 compresses PTX by default (zstd),
// which a reader of the object could not check against its input without a zstd decoder; the
// driver loads either. --device-c marks relocatable cubins (ptxas -c), for nvlink.

import { element, invalidType, invalidValue, optionKeys, ownFields, ownOptions, requireNoNul, requireObject, requireString } from '../errors.js'

export const FATBINARY_OUTPUT = '/dev/stdout'

export interface FatbinaryImage {
  kind: 'elf' | 'ptx'
  /** The target, e.g. 'sm_100a'. */
  gpuName: string
  /** Where fatbinary reads it. */
  file: string
}

const GPU_NAME = /^sm_([1-9][0-9]*[af]?)$/

export interface FatbinaryArgvOptions {
  /** The cubins are relocatable (ptxas -c): --device-c. */
  relocatable?: boolean | undefined
}

const FATBINARY_ARGV_KEYS = optionKeys<FatbinaryArgvOptions>({ relocatable: true })

export function buildFatbinaryArgv(images: readonly FatbinaryImage[], given: FatbinaryArgvOptions = {}): string[] {
  if (!Array.isArray(images)) throw invalidType('images', 'an array of { kind, gpuName, file }', images)
  // Own fields and elements only: an inherited relocatable would mark every fat binary --device-c.
  const options = ownOptions('options', given, FATBINARY_ARGV_KEYS)
  if (images.length === 0) throw invalidValue('images', 'must not be empty')
  const argv = ['fatbinary', `--create=${FATBINARY_OUTPUT}`, '-64', '--compress=false']
  if (options.relocatable === true) argv.push('--device-c')
  // Element by element, each checked as it is read: a sparse array of 2^32 - 1 is refused at its
  // first hole, where a copy of it first ran the heap out (a fatal error, not an exception).
  for (let i = 0; i < images.length; i++) {
    const given = element(images, i)
    requireObject(`images[${i}]`, given)
    const image = ownFields(given as FatbinaryImage)
    const sm = GPU_NAME.exec(requireString(`images[${i}].gpuName`, image.gpuName))?.[1]
    if (sm === undefined) throw invalidValue(`images[${i}].gpuName`, 'must look like sm_100 or sm_100a', image.gpuName)
    if (image.kind !== 'elf' && image.kind !== 'ptx') throw invalidValue(`images[${i}].kind`, "must be 'elf' or 'ptx'", image.kind)
    // fatbinary splits an image spec at commas: a path with one would be cut.
    if (requireNoNul(`images[${i}].file`, requireString(`images[${i}].file`, image.file)).includes(',')) {
      throw invalidValue(`images[${i}].file`, 'must not contain a comma (fatbinary splits --image3 at commas)', image.file)
    }
    argv.push(`--image3=kind=${image.kind},sm=${sm},file=${image.file}`)
  }
  return argv
}
