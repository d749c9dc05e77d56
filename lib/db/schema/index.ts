export * from "./organizations";
export * from "./catalog";
export * from "./licences";
export * from "./api-keys";
export * from "./episodes";
export * from "./admin-audit";
export * from "./disclosures";
export * from "./disclosure-integrity";
