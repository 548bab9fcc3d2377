#!/usr/bin/python3
"""spdx_validate.py SCHEMA SBOM: exit 1 listing every error of SBOM against the SPDX 2.3 JSON
schema, every relationship naming an element the document does not define, and every licence
expression that is not valid SPDX (python3-license-expression's SPDX list; a LicenseRef- must be
one of the document's hasExtractedLicensingInfos, each defined once with a well-formed id)."""
import json
import re
import sys

import jsonschema
from license_expression import get_spdx_licensing

schema = json.load(open(sys.argv[1]))
doc = json.load(open(sys.argv[2]))
errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
          for e in jsonschema.Draft7Validator(schema).iter_errors(doc)]
ids = {"SPDXRef-DOCUMENT"} | {p["SPDXID"] for p in doc.get("packages", [])}
errors += [f"relationship names undefined element {r[k]}"
           for r in doc.get("relationships", [])
           for k in ("spdxElementId", "relatedSpdxElement") if r[k] not in ids]

licensing = get_spdx_licensing()
refs = [x["licenseId"] for x in doc.get("hasExtractedLicensingInfos", [])]
errors += [f"hasExtractedLicensingInfos: malformed or repeated id {r}" for i, r in enumerate(refs)
           if not re.fullmatch(r"LicenseRef-[A-Za-z0-9.\-]+", r) or r in refs[:i]]


def known(key):
    """An SPDX licence id, or one followed by '+' (SPDX's "or any later version")."""
    return not licensing.validate(key.removesuffix("+"), strict=True).errors


def license_errors(expr):
    if expr in ("NOASSERTION", "NONE"):
        return []
    errs = [f"{r} is not in hasExtractedLicensingInfos"
            for r in re.findall(r"LicenseRef-[A-Za-z0-9.\-]+", expr) if r not in refs]
    for e in licensing.validate(expr, strict=True).errors:
        if e.startswith("Unknown license key(s):"):
            bad = [k for k in e.split(":", 1)[1].replace(",", " ").split()
                   if not k.startswith("LicenseRef-") and not known(k)]
            errs += [f"unknown SPDX licence id {k}" for k in bad]
        else:
            errs.append(e)
    return errs


for p in doc.get("packages", []):
    for field in ("licenseDeclared", "licenseConcluded"):
        errors += [f"{p['SPDXID']}/{field}: {e}" for e in license_errors(p.get(field, "NOASSERTION"))]
for e in errors:
    print(f"{sys.argv[2]}: {e}", file=sys.stderr)
sys.exit(1 if errors else 0)
