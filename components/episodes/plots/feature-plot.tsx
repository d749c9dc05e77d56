"use client";

import { useEffect, useRef, useState } from "react";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import type { AnnotationRecord } from "@/lib/catalog/list-annotations";
import type { PlaybackEngine } from "../player/engine";
import type { Feature } from "./episode-table";

/** Distinct on white, cycled when a feature has more dimensions. */
const COLOURS = [
  "#2563eb",
  "#dc2626",
  "#16a34a",
  "#9333ea",
  "#ea580c",
  "#0891b2",
  "#ca8a04",
  "#db2777",
  "#4f46e5",
  "#65a30d",
  "#0d9488",
  "#be123c",
];
export const colourOf = (dimension: number) => COLOURS[dimension % COLOURS.length]!;

const HEIGHT = 180;

/**
 * One numeric feature over the episode, one line per dimension, on one canvas (uPlot): the subtask
 * spans shade the background, a line marks the playhead, and a click or a drag seeks the video.
 * The playhead line moves by a CSS transform on each clock tick, so the thousands of points are
 * drawn once, not per frame.
 */
export function FeaturePlot({
  feature,
  time,
  spans,
  engine,
  length,
}: {
  feature: Feature;
  time: Float64Array;
  spans: readonly AnnotationRecord[];
  engine: PlaybackEngine;
  length: number;
}) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const [shown, setShown] = useState<boolean[]>(() => feature.names.map(() => true));

  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const shade = (u: uPlot) => {
      const { ctx, bbox } = u;
      ctx.save();
      spans.forEach((span, i) => {
        const left = u.valToPos(span.start_s, "x", true);
        const right = u.valToPos(span.end_s, "x", true);
        ctx.fillStyle = i % 2 ? "rgba(99, 102, 241, 0.07)" : "rgba(14, 165, 233, 0.1)";
        ctx.fillRect(left, bbox.top, Math.max(1, right - left), bbox.height);
      });
      ctx.restore();
    };
    const u = new uPlot(
      {
        width: Math.max(200, element.clientWidth),
        height: HEIGHT,
        legend: { show: false },
        cursor: { drag: { x: false, y: false, setScale: false }, points: { show: false }, y: false },
        scales: { x: { time: false, range: [0, Math.max(length, time.at(-1) ?? 0)] } },
        axes: [
          {
            stroke: "#64748b",
            grid: { stroke: "#f1f5f9" },
            ticks: { stroke: "#e2e8f0" },
            values: (_, v) => v.map((s) => `${s}s`),
          },
          { stroke: "#64748b", grid: { stroke: "#f1f5f9" }, ticks: { stroke: "#e2e8f0" }, size: 56 },
        ],
        series: [
          {},
          ...feature.names.map((name, d) => ({ label: name, stroke: colourOf(d), width: 1, points: { show: false } })),
        ],
        hooks: { drawClear: [shade] },
      },
      [time as unknown as number[], ...(feature.dimensions as unknown as number[][])],
      element,
    );
    plot.current = u;

    // The playhead: a line over the plot, moved by transform on every tick of the clock.
    const head = document.createElement("div");
    head.dataset.playhead = "";
    head.style.cssText = "position:absolute;top:0;bottom:0;left:0;width:2px;background:#0f172a;pointer-events:none;";
    u.over.appendChild(head);
    const place = (t: number) => {
      const x = u.valToPos(t, "x");
      head.style.transform = `translateX(${Math.round(x - 1)}px)`;
      head.dataset.time = t.toFixed(3);
    };
    place(engine.time);
    const stopFollowing = engine.onTime(place);

    // A click or a drag on the plot seeks the video to that time.
    let dragging = false;
    const seekTo = (event: PointerEvent) => {
      const rect = u.over.getBoundingClientRect();
      engine.seek(u.posToVal(event.clientX - rect.left, "x"));
    };
    const down = (event: PointerEvent) => {
      dragging = true;
      u.over.setPointerCapture(event.pointerId);
      seekTo(event);
    };
    const move = (event: PointerEvent) => dragging && seekTo(event);
    const up = () => {
      dragging = false;
    };
    u.over.addEventListener("pointerdown", down);
    u.over.addEventListener("pointermove", move);
    u.over.addEventListener("pointerup", up);
    u.over.addEventListener("pointercancel", up);
    u.over.style.cursor = "col-resize";

    // Redrawn only when the width really changes (the observer also reports the first layout, already drawn).
    let width = u.width;
    const resize = new ResizeObserver(() => {
      const now = Math.max(200, element.clientWidth);
      if (now === width) return;
      width = now;
      u.setSize({ width, height: HEIGHT });
      place(engine.time);
    });
    resize.observe(element);
    return () => {
      resize.disconnect();
      stopFollowing();
      u.destroy();
      plot.current = null;
    };
  }, [feature, time, spans, engine, length]);

  const toggle = (d: number) => {
    setShown((current) => {
      const next = current.map((on, i) => (i === d ? !on : on));
      plot.current?.setSeries(d + 1, { show: next[d]! });
      return next;
    });
  };

  return (
    <figure className="min-w-0" data-feature={feature.key}>
      <figcaption className="flex flex-wrap items-baseline justify-between gap-x-3 gap-y-1">
        <span className="font-mono text-sm font-semibold text-slate-800 wrap-anywhere">{feature.key}</span>
        <span className="text-xs text-slate-500">
          {feature.names.length} {feature.names.length === 1 ? "dimension" : "dimensions"}, {time.length} frames
        </span>
      </figcaption>
      <div
        ref={box}
        className="relative mt-1 w-full"
        role="img"
        aria-label={`${feature.key} over the episode; click or drag to move the video there`}
      />
      <ul className="mt-1 flex flex-wrap gap-1" aria-label={`Lines of ${feature.key}`}>
        {feature.names.map((name, d) => (
          <li key={d} className="min-w-0">
            <button
              type="button"
              aria-pressed={shown[d]}
              onClick={() => toggle(d)}
              data-dimension={name}
              className="flex max-w-64 items-center gap-1 rounded px-1.5 py-0.5 text-xs text-slate-700 ring-1 ring-inset ring-slate-200 hover:bg-slate-50 aria-[pressed=false]:text-slate-400 aria-[pressed=false]:line-through focus-visible:outline focus-visible:outline-2 focus-visible:outline-brand-600"
            >
              <span
                aria-hidden
                className="inline-block h-2 w-2 shrink-0 rounded-full"
                style={{ background: colourOf(d) }}
              />
              <span className="truncate font-mono" title={name.length > 30 ? name : undefined}>
                {name}
              </span>
            </button>
          </li>
        ))}
      </ul>
    </figure>
  );
}
