"""One Streamlit panel a benchmark (DocILE, FUNSD / EC-FUNSD, OmniDocBench), each with `render()`;
its charts live with its scorer (`tore_engine.scorers.<benchmark>.figures`: Plotly figures, pure
functions, no Streamlit), so that the benchmark's folder holds its numbers and their pictures.
A benchmark's panel is one line of the Scores page's registry (`app_pages/scores.PANELS`), its
session keys one `Family` of `state`.

Panels show what the engine's scorers return; they compute no metric themselves. What the three
share (cache stamps, how a number is written, picking a row, page images, chart settings) is in
`common`.
"""
