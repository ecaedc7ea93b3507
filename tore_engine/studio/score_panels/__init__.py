"""One Streamlit panel a benchmark (DocILE, FUNSD / EC-FUNSD, OmniDocBench), each with `render()`.

Panels show what the engine's scorers return; they compute no metric themselves.
"""
