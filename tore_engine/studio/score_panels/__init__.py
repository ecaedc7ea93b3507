"""One Streamlit panel a benchmark (DocILE, FUNSD / EC-FUNSD, OmniDocBench), each with `render()`,
and beside each its charts (`<benchmark>_figures.py`: Plotly figures, pure functions, no Streamlit).

Panels show what the engine's scorers return; they compute no metric themselves. What the three
share (cache stamps, how a number is written, picking a row, page images, chart settings) is in
`common`.
"""
