#!/usr/bin/python3
"""spdx_validate.py SCHEMA SBOM: exit 1 listing every error of SBOM against the SPDX 2.3 JSON
schema, and every relationship naming an element the document does not define."""
import json
import sys

import jsonschema

schema = json.load(open(sys.argv[1]))
doc = json.load(open(sys.argv[2]))
errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
          for e in jsonschema.Draft7Validator(schema).iter_errors(doc)]
ids = {"SPDXRef-DOCUMENT"} | {p["SPDXID"] for p in doc.get("packages", [])}
errors += [f"relationship names undefined element {r[k]}"
           for r in doc.get("relationships", [])
           for k in ("spdxElementId", "relatedSpdxElement") if r[k] not in ids]
for e in errors:
    print(f"{sys.argv[2]}: {e}", file=sys.stderr)
sys.exit(1 if errors else 0)
