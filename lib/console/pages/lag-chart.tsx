/** @module The lag chart: total lag over time with uPlot, redrawn as samples arrive. */
import { useEffect, useRef } from "preact/hooks";
import uPlot from "uplot";
import type { LagSample } from "../lag-samples.js";

export function LagChart({ samples }: { samples: LagSample[] }) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);

  useEffect(() => {
    const el = box.current;
    if (el === null) return;
    const width = () => Math.max(280, Math.min(el.clientWidth, 1100));
    plot.current = new uPlot(
      {
        width: width(),
        height: 260,
        title: "Total lag",
        scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
        series: [{}, { label: "lag", stroke: "#2563eb", width: 2, fill: "rgba(37,99,235,0.12)" }],
        axes: [{}, { label: "messages" }],
      },
      [[], []],
      el,
    );
    const onResize = () => plot.current?.setSize({ width: width(), height: 260 });
    window.addEventListener("resize", onResize);
    return () => {
      window.removeEventListener("resize", onResize);
      plot.current?.destroy();
      plot.current = null;
    };
  }, []);

  useEffect(() => {
    plot.current?.setData([samples.map((s) => s.at / 1000), samples.map((s) => s.lag)]);
  }, [samples]);

  const last = samples[samples.length - 1];
  return (
    <figure class="chart">
      <div ref={box} data-testid="lag-chart" data-samples={samples.length} />
      <figcaption>
        {samples.length} samples
        {last ? `; latest lag ${last.lag} at ${new Date(last.at).toISOString().slice(11, 19)} UTC` : ""}
      </figcaption>
    </figure>
  );
}
