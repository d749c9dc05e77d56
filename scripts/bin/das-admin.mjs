#!/usr/bin/env node
// `das-admin`: the bundle `npm install` made of scripts/das-admin.ts (bundle.mjs), made again first if a source is newer.
import { bundled } from "./bundle.mjs";

await import(await bundled("das-admin"));
