"""Reading and writing layouts in the formats users have (docs/formats.md#your-data): one module a
format, each producing the same `LayoutSet`, so everything after loading is shared; `detect`
recognises a format from the content, never the file name. Which module reads which `--format`
is the registry in `tore_engine.api`. Every reader goes through `tore_engine.io`: bounded files,
depth-checked JSON without duplicate keys, strict schemas, page images confined to their folder.
"""
