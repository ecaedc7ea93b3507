from tore_engine.cli import console

console()
