"""Flash and static RAM of firmware images by origin, from their linker maps.

    python3 size_breakdown.py [--budget IMAGE=BYTES ...] IMAGE.map [IMAGE.map ...]

Sums the sizes of the input sections the linker kept (the "Linker script
and memory map" part of a GNU ld map), by the archive or object they came
from: Blur's SDK, mbedTLS, nanopb with the generated schema, the board
port, the example's own code, and the C runtime. Flash is .text, .rodata,
.ARM.exidx and the load image of .data; static RAM is .data and .bss.

With --budget IMAGE=BYTES (size_budgets.cmake), the SDK's own flash in
IMAGE must not pass BYTES: exit status 1 if it does.
"""
import re
import sys

GROUPS = (
    ("SDK (libblur_sdk, libblur_client)", ("libblur_sdk.a", "libblur_client")),
    ("mbedTLS", ("libblur_mbedtls.a",)),
    ("nanopb + schema", ("libblur_nanopb.a", "libblur_proto.a")),
    ("board port", ("libblur_port_cortex_m.a",)),
    ("example", ("main.cpp.obj", "mechanism_cost.cpp.obj")),
)

def group_of(path):
    for name, needles in GROUPS:
        if any(n in path for n in needles):
            return name
    return "C runtime (picolibc, libgcc, libstdc++)"

def breakdown(path):
    text = open(path).read()
    text = text[text.index("Linker script and memory map"):]
    flash, ram = {}, {}
    # An input section: name, then (maybe on the next line) address, size, file.
    pattern = re.compile(r"^ (\.[\w.$]+)\s*\n?\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S+)$", re.M)
    for name, address, size, origin in pattern.findall(text):
        size = int(size, 16)
        if size == 0 or int(address, 16) == 0:
            continue
        group = group_of(origin)
        if name.startswith((".text", ".rodata", ".ARM.exidx", ".data")):
            flash[group] = flash.get(group, 0) + size
        if name.startswith((".data", ".bss")):
            ram[group] = ram.get(group, 0) + size
    name = image = path.rsplit("/", 1)[-1].removesuffix(".map")
    print(f"  {name} by origin (flash / static RAM, from the linker map):")
    for name, _ in GROUPS + (("C runtime (picolibc, libgcc, libstdc++)", ()),):
        print(f"    {name:40} {flash.get(name, 0):6} B / {ram.get(name, 0):5} B")
    sdk = sum(flash.get(n, 0) for n in (GROUPS[0][0], "mbedTLS", "nanopb + schema"))
    sdk_ram = sum(ram.get(n, 0) for n in (GROUPS[0][0], "mbedTLS", "nanopb + schema"))
    print(f"    SDK-attributable (SDK + mbedTLS + nanopb): {sdk} B flash, {sdk_ram} B static RAM")
    return image, flash.get(GROUPS[0][0], 0)

if __name__ == "__main__":
    args, budgets = sys.argv[1:], {}
    while args and args[0] == "--budget":
        image, _, limit = args[1].partition("=")
        budgets[image] = int(limit)
        args = args[2:]
    over = []
    for map_file in args:
        image, sdk_flash = breakdown(map_file)
        if image in budgets:
            verdict = "within" if sdk_flash <= budgets[image] else "OVER"
            print(f"    budget: SDK {sdk_flash} B, {verdict} its {budgets[image]} B "
                  "(examples/firmware-m4/size_budgets.cmake)")
            if sdk_flash > budgets[image]:
                over.append(image)
    missing = set(budgets) - {m.rsplit("/", 1)[-1].removesuffix(".map") for m in args}
    if missing:
        sys.exit(f"no map for the budgeted images {sorted(missing)}")
    if over:
        sys.exit(f"SDK flash over budget in {', '.join(over)}")
