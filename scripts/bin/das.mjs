#!/usr/bin/env node
// `das`: the bundle `npm install` made of scripts/das.ts (bundle.mjs), made again first if a source is newer.
import { bundled } from "./bundle.mjs";

await import(await bundled("das"));
